//! Wire benchmark: ProtoJSON encode and decode of a realistic Task (20 history messages, 3
//! artifacts) and of an agent card, ours against the official a2a-pb ProtoJSON path on the same
//! values.
//!
//! `cargo bench -p a2a-runtime --bench wire -- --warm-up-time 1 --measurement-time 3`
//!
//! Groups: `task/encode`, `task/decode`, `card/encode`, `card/decode`, each with
//! - `ours`: `serde_json::to_vec` / `json::decode` (the production decoder: depth check, path
//!   tracking), plus `ours_plain_serde` (`serde_json::from_slice`, no depth check) for decode
//!   and `ours_json_out` (`json::to_vec`, the production encoder, same bytes) for encode;
//! - `a2a_pb_conv`: a2a-pb's public ProtoJSON API for native values
//!   (`protojson_conv::to_value` + `serde_json::to_vec` / `protojson_conv::from_str`);
//! - `a2a_pb_pbjson`: a2a-pb's generated pbjson types alone (`serde_json` on
//!   `a2a_pb::protojson::*`), the lower bound of their path.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use a2a_runtime::json::{self, DEFAULT_MAX_DEPTH};
use a2a_runtime::types::{
    AgentCard, Artifact, Message, Metadata, Part, Role, Task, TaskState, TaskStatus, Timestamp,
};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;

const SENTENCE: &str =
    "Booked the 08:39 Intercity from Lisbon Santa Apolonia to Porto Campanha, seat 12A, coach 3.";

fn text_100(i: usize) -> String {
    let mut s = format!("{i:03} {SENTENCE}");
    s.truncate(100);
    s
}

fn metadata(i: usize) -> Metadata {
    match json!({
        "https://travel.example.com/ext/traveler-profile/v1": {"seatPreference": "window", "loyaltyId": format!("LY-{i:06}")},
        "traceId": format!("4bf92f3577b34da6a3ce929d0e0e{i:04}"),
        "attempt": i,
    }) {
        serde_json::Value::Object(m) => m.into(),
        _ => unreachable!(),
    }
}

/// A Task with 20 history messages and 3 artifacts: ~100-character text parts, metadata with a
/// few keys, ids shaped like UUIDs.
fn realistic_task() -> Task {
    let task_id = "0f3c2a8e-5b7d-4f6a-9c1e-2d4b6a8c0e13";
    let context_id = "c81f2a7e-1d0b-4a3e-9a53-0c8d2b1f4e11";
    let history = (0..20)
        .map(|i| Message {
            message_id: format!("7c1e7f0e-1d0b-4a3e-9a53-0c8d2b1f{i:04}").into(),
            context_id: context_id.into(),
            task_id: task_id.into(),
            role: if i % 2 == 0 { Role::User } else { Role::Agent },
            parts: vec![Part::text(text_100(i))],
            metadata: metadata(i),
            ..Message::default()
        })
        .collect();
    let artifacts = (0..3)
        .map(|i| Artifact {
            artifact_id: format!("a1b2c3d4-0000-4000-8000-00000000000{i}").into(),
            name: format!("itinerary-{i}"),
            description: "Day-by-day plan".into(),
            parts: vec![
                Part::text(text_100(100 + i)).with_media_type("text/markdown"),
                Part::data(
                    json!({"train": "IC 521", "departs": "08:39", "seat": "12A", "coach": 3}),
                ),
            ],
            metadata: metadata(100 + i),
            ..Artifact::default()
        })
        .collect();
    Task {
        id: task_id.into(),
        context_id: context_id.into(),
        status: TaskStatus {
            state: TaskState::Completed,
            message: Some(Message {
                message_id: "m-final".into(),
                role: Role::Agent,
                parts: vec![Part::text(text_100(999))],
                ..Message::default()
            }),
            timestamp: Some(Timestamp::from_millis(1_774_001_564_120).unwrap()),
        },
        artifacts,
        history,
        metadata: metadata(0),
    }
}

/// The §9.1 card of the spec digest (all five security schemes, extensions, skills).
fn card() -> AgentCard {
    let text = include_str!("../../tests/fixtures/agent_card.json");
    serde_json::from_str(text).unwrap()
}

fn bench_value<Ours, Native, Pb>(c: &mut Criterion, name: &str, ours: &Ours)
where
    Ours: serde::Serialize + serde::de::DeserializeOwned,
    Native: a2a_pb::protojson_conv::ProtoJsonPayload,
    Pb: serde::Serialize + serde::de::DeserializeOwned,
{
    let ours_bytes = serde_json::to_vec(ours).unwrap();
    let native: Native =
        a2a_pb::protojson_conv::from_str(std::str::from_utf8(&ours_bytes).unwrap()).unwrap();
    let pb_bytes = serde_json::to_vec(&a2a_pb::protojson_conv::to_value(&native).unwrap()).unwrap();
    let pb_value: Pb = serde_json::from_slice(&pb_bytes).unwrap();
    // The same value on both sides: each decodes the other's encoding.
    let _: Ours = json::decode(&pb_bytes, DEFAULT_MAX_DEPTH).unwrap();

    let mut g = c.benchmark_group(format!("{name}/encode"));
    g.throughput(Throughput::Bytes(ours_bytes.len() as u64));
    g.bench_function("ours", |b| {
        b.iter(|| serde_json::to_vec(black_box(ours)).unwrap())
    });
    assert_eq!(json::to_vec(ours).unwrap(), ours_bytes);
    g.bench_function("ours_json_out", |b| {
        b.iter(|| json::to_vec(black_box(ours)).unwrap())
    });
    g.bench_function("a2a_pb_conv", |b| {
        b.iter(|| {
            let v = a2a_pb::protojson_conv::to_value(black_box(&native)).unwrap();
            serde_json::to_vec(&v).unwrap()
        })
    });
    g.bench_function("a2a_pb_pbjson", |b| {
        b.iter(|| serde_json::to_vec(black_box(&pb_value)).unwrap())
    });
    g.finish();

    let mut g = c.benchmark_group(format!("{name}/decode"));
    g.throughput(Throughput::Bytes(ours_bytes.len() as u64));
    g.bench_function("ours", |b| {
        b.iter(|| json::decode::<Ours>(black_box(&ours_bytes), DEFAULT_MAX_DEPTH).unwrap())
    });
    g.bench_function("ours_plain_serde", |b| {
        b.iter(|| serde_json::from_slice::<Ours>(black_box(&ours_bytes)).unwrap())
    });
    let pb_text = String::from_utf8(pb_bytes.clone()).unwrap();
    g.bench_function("a2a_pb_conv", |b| {
        b.iter(|| a2a_pb::protojson_conv::from_str::<Native>(black_box(&pb_text)).unwrap())
    });
    g.bench_function("a2a_pb_pbjson", |b| {
        b.iter(|| serde_json::from_slice::<Pb>(black_box(&pb_bytes)).unwrap())
    });
    g.finish();
}

fn wire(c: &mut Criterion) {
    bench_value::<Task, a2a::Task, a2a_pb::protojson::Task>(c, "task", &realistic_task());
    bench_value::<AgentCard, a2a::AgentCard, a2a_pb::protojson::AgentCard>(c, "card", &card());
}

criterion_group!(benches, wire);
criterion_main!(benches);
