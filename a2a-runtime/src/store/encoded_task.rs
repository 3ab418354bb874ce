//! The compact form in which [`InMemoryTaskStore`](super::InMemoryTaskStore) holds a finished
//! task: one boxed byte string instead of a tree of `String`s, `Vec`s and maps.
//!
//! Layout: a header, then the task's ProtoJSON (as [`serde_json::to_vec`] writes our wire types)
//! without its `id` and `contextId`:
//!
//! ```text
//! [state | TIMED] [status timestamp: i64 ms, little endian] [context id length: LEB128]
//! [context id bytes] [{"status":{…},"artifacts":[…],"history":[…],"metadata":{…}}]
//! ```
//!
//! The id is the store's map key, so it is not repeated; the state, timestamp and context id sit
//! in the header so that listing filters and orders tasks without decoding them. Decoding goes
//! through the crate's lenient ProtoJSON decoder ([`json::from_raw`], the parser behind
//! [`json::decode`]), like a request body.

use serde::Serialize;
use serde_json::Value;
use smallvec::SmallVec;

use super::StoreError;
use crate::json::{self, DEFAULT_MAX_DEPTH, splice};
use crate::types::{
    Artifact, ContextId, Message, Metadata, Part, PartContent, Task, TaskId, TaskState, TaskStatus,
    Timestamp,
};

/// Set in the first byte when the status has a timestamp.
const TIMED: u8 = 0x80;
/// State byte and timestamp.
const FIXED_HEADER: usize = 1 + 8;

/// An encoded task (see the module doc for the layout).
#[derive(Clone, PartialEq, Eq)]
pub(super) struct EncodedTask(Box<[u8]>);

impl std::fmt::Debug for EncodedTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EncodedTask")
            .field("state", &self.state())
            .field("timestamp", &self.timestamp())
            .field("bytes", &self.0.len())
            .finish()
    }
}

/// The task without its ids, serialized exactly as [`Task`] serializes those fields.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Body<'a> {
    status: &'a TaskStatus,
    #[serde(skip_serializing_if = "is_empty")]
    artifacts: &'a [Artifact],
    #[serde(skip_serializing_if = "is_empty")]
    history: &'a [Message],
    #[serde(skip_serializing_if = "no_metadata")]
    metadata: &'a Metadata,
}

fn is_empty<T>(items: &&[T]) -> bool {
    items.is_empty()
}

fn no_metadata(metadata: &&Metadata) -> bool {
    metadata.is_empty()
}

/// True when the wire form of `t` (RFC 3339, milliseconds, years 0001–9999) parses back to `t`.
fn exact_on_the_wire(t: Timestamp) -> bool {
    use chrono::Datelike as _;
    Timestamp::from_millis(t.millis()) == Some(t) && (1..=9999).contains(&t.0.year())
}

/// Without free-form JSON, a task's encoding nests at most this deep.
const SHAPE_DEPTH: usize = 6;

/// How deep the free-form JSON in `task` nests (metadata objects and data parts: the only
/// content whose depth the task's shape does not fix), counting each object or array as one
/// level; anything beyond `limit` counts as `limit + 1`.
fn free_form_depth(task: &Task, limit: usize) -> usize {
    let mut deepest = 0;
    let mut see = |d: usize| deepest = deepest.max(d);
    let metadata = |m: &Metadata| {
        if m.is_empty() {
            0
        } else {
            1 + values_depth(m.values(), limit)
        }
    };
    let parts = |parts: &[Part]| {
        parts
            .iter()
            .map(|p| {
                let data = match &p.content {
                    PartContent::Data(v) => values_depth(std::iter::once(v), limit),
                    _ => 0,
                };
                data.max(metadata(&p.metadata))
            })
            .max()
            .unwrap_or(0)
    };
    let message = |m: &Message| metadata(&m.metadata).max(parts(&m.parts));
    see(metadata(&task.metadata));
    if let Some(m) = &task.status.message {
        see(message(m));
    }
    for m in &task.history {
        see(message(m));
    }
    for a in &task.artifacts {
        see(metadata(&a.metadata).max(parts(&a.parts)));
    }
    deepest
}

/// The deepest nesting among `values` (a scalar is 0), up to `limit + 1`; no recursion, and no
/// allocation when every value is a scalar.
fn values_depth<'a>(values: impl Iterator<Item = &'a Value>, limit: usize) -> usize {
    let container = |v: &&Value| matches!(v, Value::Array(_) | Value::Object(_));
    let mut deepest = 0;
    let mut pending: Vec<(&Value, usize)> = Vec::new();
    for v in values.filter(container) {
        pending.push((v, 1));
        while let Some((v, depth)) = pending.pop() {
            deepest = deepest.max(depth);
            if deepest > limit {
                return limit + 1;
            }
            match v {
                Value::Array(a) => {
                    pending.extend(a.iter().filter(container).map(|c| (c, depth + 1)))
                }
                Value::Object(o) => {
                    pending.extend(o.values().filter(container).map(|c| (c, depth + 1)));
                }
                _ => {}
            }
        }
    }
    deepest
}

thread_local! {
    /// Where tasks are encoded before being copied to an exactly sized box (no reallocation),
    /// and where [`EncodedTask::from_json`] writes the ids it expects at the start of the JSON.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A scratch buffer larger than this is not kept for the next encoding.
const SCRATCH_KEEP: usize = 64 * 1024;

impl EncodedTask {
    /// Encodes `task`; `None` when the encoding would not decode to an equal task (a timestamp
    /// finer than a millisecond or outside years 1–9999, JSON nested deeper than the decoder
    /// accepts), in which case the caller keeps the value.
    pub(super) fn encode(task: &Task) -> Option<Self> {
        // No `..`: a field added to `Task` must be added to `Body` too.
        let Task {
            id: _,
            context_id: _,
            status,
            artifacts,
            history,
            metadata,
        } = task;
        let body = Body {
            status,
            artifacts,
            history,
            metadata,
        };
        Self::assemble(task, None, |out| {
            crate::json::writer::to_writer(out, &body).ok()
        })
    }

    /// As [`encode`](Self::encode), from `json`, the task's JSON exactly as
    /// the JSON writer writes a [`Task`] (the runtime has it when it is about to
    /// send the task as a reply): its body is copied instead of encoded again, straight into a
    /// box of the right size. `None` as `encode`, and when `json` does not begin with the task's
    /// ids.
    pub(super) fn from_json(task: &Task, json: &[u8]) -> Option<Self> {
        // The ids as the task's serializer writes them, then the body's first member (written
        // in the scratch buffer, which is free here).
        let members = |ids: &mut Vec<u8>| -> Option<&[u8]> {
            ids.clear();
            splice::member(ids, true, "id");
            crate::json::writer::to_writer(ids, &task.id).ok()?;
            if !task.context_id.is_empty() {
                splice::member(ids, false, "contextId");
                crate::json::writer::to_writer(ids, &task.context_id).ok()?;
            }
            splice::members_from(json, ids, "status")
        };
        // `"status":…` onwards, after a `{`: the body.
        let rest = match SCRATCH
            .try_with(|scratch| scratch.try_borrow_mut().ok().map(|mut s| members(&mut s)))
        {
            Ok(Some(found)) => found,
            _ => members(&mut Vec::new()),
        }?;
        Self::assemble(task, Some(1 + rest.len()), |out| {
            out.push(b'{');
            out.extend_from_slice(rest);
            Some(())
        })
    }

    /// Writes the header of `task`, then its body with `body` (which returns `None` on
    /// failure), checks that the result decodes, and boxes it. With the body's length known, it
    /// is written into a buffer of the exact size, which becomes the box; otherwise into a
    /// scratch buffer, copied to a box of the right size.
    fn assemble(
        task: &Task,
        body_len: Option<usize>,
        body: impl FnOnce(&mut Vec<u8>) -> Option<()>,
    ) -> Option<Self> {
        let timestamp = task.status.timestamp;
        if timestamp.is_some_and(|t| !exact_on_the_wire(t)) {
            return None;
        }
        let state = u8::try_from(task.status.state.number())
            .ok()
            .filter(|n| *n < TIMED)?;
        let context = task.context_id.as_str().as_bytes();
        let mut context_len: SmallVec<[u8; 10]> = SmallVec::new();
        let mut len = context.len();
        while len >= 0x80 {
            context_len.push((len & 0x7f) as u8 | 0x80);
            len >>= 7;
        }
        context_len.push(len as u8);
        // The whole encoding is scanned only when its free-form JSON might reach the limit.
        let deep_check = SHAPE_DEPTH + free_form_depth(task, DEFAULT_MAX_DEPTH) > DEFAULT_MAX_DEPTH;
        let mut body = Some(body);
        let mut write = |out: &mut Vec<u8>| -> Option<()> {
            out.push(state | if timestamp.is_some() { TIMED } else { 0 });
            out.extend_from_slice(&timestamp.map_or(0, |t| t.millis()).to_le_bytes());
            out.extend_from_slice(&context_len);
            out.extend_from_slice(context);
            let body_start = out.len();
            (body.take()?)(out)?;
            if deep_check {
                json::check_depth(out.get(body_start..)?, DEFAULT_MAX_DEPTH).ok()?;
            }
            Some(())
        };
        let frozen = if let Some(body_len) = body_len {
            let mut out =
                Vec::with_capacity(FIXED_HEADER + context_len.len() + context.len() + body_len);
            write(&mut out)?;
            // Exactly as long as it was sized: no reallocation.
            Self(out.into_boxed_slice())
        } else {
            let scratch = SCRATCH.try_with(|scratch| {
                let mut out = scratch.try_borrow_mut().ok()?;
                out.clear();
                let frozen = write(&mut out).map(|()| Self(Box::from(out.as_slice())));
                if out.capacity() > SCRATCH_KEEP {
                    *out = Vec::new();
                }
                Some(frozen)
            });
            match scratch {
                Ok(Some(frozen)) => frozen?,
                // No scratch buffer (thread teardown, or in use further up): a buffer of our own.
                _ => {
                    let mut out = Vec::with_capacity(FIXED_HEADER + 5 + context.len() + 512);
                    write(&mut out)?;
                    Self(out.into_boxed_slice())
                }
            }
        };
        debug_assert!(
            frozen.decode(task.id.as_str()).ok().as_ref() == Some(task),
            "an encoded task must decode to itself: {task:?}"
        );
        Some(frozen)
    }

    /// A stand-in holding no task: its state is unspecified and decoding it fails.
    pub(super) fn empty() -> Self {
        EncodedTask(Box::default())
    }

    /// The status state.
    pub(super) fn state(&self) -> TaskState {
        self.0
            .first()
            .and_then(|b| TaskState::from_number(i64::from(b & !TIMED)))
            .unwrap_or_default()
    }

    /// The status timestamp in milliseconds since the epoch (0 when unset, as in
    /// [`ListCursor`](super::ListCursor)).
    pub(super) fn millis(&self) -> i64 {
        self.0
            .get(1..FIXED_HEADER)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map_or(0, i64::from_le_bytes)
    }

    /// The status timestamp.
    pub(super) fn timestamp(&self) -> Option<Timestamp> {
        let timed = self.0.first().is_some_and(|b| b & TIMED != 0);
        if timed {
            Timestamp::from_millis(self.millis())
        } else {
            None
        }
    }

    /// The context id and the body, split at the end of the header.
    fn context_and_body(&self) -> Option<(&[u8], &[u8])> {
        let mut len = 0usize;
        let mut at = FIXED_HEADER;
        for shift in (0..usize::BITS).step_by(7) {
            let b = *self.0.get(at)?;
            at += 1;
            len |= usize::from(b & 0x7f).checked_shl(shift)?;
            if b & 0x80 == 0 {
                let end = at.checked_add(len)?;
                return Some((self.0.get(at..end)?, self.0.get(end..)?));
            }
        }
        None
    }

    /// The context id's bytes (UTF-8); empty when unset or malformed.
    pub(super) fn context_id(&self) -> &[u8] {
        self.context_and_body().map_or(&[], |(c, _)| c)
    }

    /// The task, given its id.
    pub(super) fn decode(&self, id: &str) -> Result<Task, StoreError> {
        let fail = |what: &str| StoreError::Backend(format!("held task {id} {what}"));
        let (context, body) = self
            .context_and_body()
            .ok_or_else(|| fail("has a malformed header"))?;
        let context =
            std::str::from_utf8(context).map_err(|_| fail("has a context id that is not UTF-8"))?;
        // `encode` checked the depth; what remains of `json::decode` is the UTF-8 check.
        let body = std::str::from_utf8(body).map_err(|_| fail("has a body that is not UTF-8"))?;
        let mut task: Task =
            json::from_raw(body).map_err(|e| fail(&format!("does not decode: {e}")))?;
        task.id = TaskId::from(id);
        task.context_id = ContextId::from(context);
        Ok(task)
    }

    /// The size of the encoding in bytes.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    /// Bytes taken as they are (tests of malformed input).
    #[cfg(test)]
    pub(super) fn from_raw(bytes: &[u8]) -> Self {
        Self(bytes.into())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::types::Role;
    use serde_json::json;

    /// `[[[...[1]...]]]`, `levels` arrays deep.
    fn nested(levels: usize) -> Value {
        (0..levels).fold(json!(1), |v, _| json!([v]))
    }

    #[test]
    fn free_form_depth_counts_metadata_and_data_parts_and_stops_at_the_limit() {
        let mut task = rich_task();
        // The rich task's metadata: an object (1) holding an object (2) holding `nested`,
        // itself {"a": {"b": []}} (3 more).
        assert_eq!(free_form_depth(&task, 64), 5);
        task.history[0].parts.push(Part::data(nested(9)));
        assert_eq!(free_form_depth(&task, 64), 9);
        assert_eq!(free_form_depth(&task, 4), 5, "capped at limit + 1");
        assert_eq!(free_form_depth(&Task::default(), 64), 0);
    }

    #[test]
    fn encoding_refuses_exactly_what_the_decoder_would_whatever_path_checks_it() {
        // Around the limit the whole encoding is scanned; below it, the task's free-form depth
        // vouches for it. Either way a task is encoded iff it decodes back.
        for levels in [1, 40, 55, 56, 57, 58, 59, 60, 62, 64, 70, 500] {
            let mut task = rich_task();
            task.history[0].parts.push(Part::data(nested(levels)));
            let decodable =
                json::check_depth(&serde_json::to_vec(&task).unwrap(), DEFAULT_MAX_DEPTH).is_ok();
            match EncodedTask::encode(&task) {
                Some(frozen) => {
                    assert!(decodable, "{levels} levels encoded but would not decode");
                    assert_eq!(frozen.decode(task.id.as_str()).unwrap(), task, "{levels}");
                }
                None => assert!(!decodable, "{levels} levels decodable but not encoded"),
            }
        }
    }

    fn rich_task() -> Task {
        let metadata: Metadata = serde_json::from_value(json!({
            "https://example.com/ext/v1": {
                "big": u64::MAX, "neg": i64::MIN, "f": 1.234_567_890_123_456_7, "tiny": 5e-324,
                "one": 1.0, "list": [1, -2, 0.5, null, true, "x"], "nested": {"a": {"b": []}}
            },
            "plain": "text with \"quotes\", \\ and \u{1F600}"
        }))
        .unwrap();
        Task {
            id: "4f1a0c2e-8b7d-4c5e-9a3f-2d6b1e0f7a98".into(),
            context_id: "ctx-é-1".into(),
            status: TaskStatus {
                state: TaskState::Completed,
                message: Some(Message {
                    message_id: "m2".into(),
                    role: Role::Agent,
                    parts: vec![Part::text("done")],
                    ..Message::default()
                }),
                timestamp: Timestamp::from_millis(1_774_000_000_123),
            },
            artifacts: vec![
                Artifact {
                    artifact_id: "a1".into(),
                    name: "out".into(),
                    description: "several parts".into(),
                    parts: vec![
                        Part::text("echo: hello"),
                        serde_json::from_value(json!({"raw": "AAEC/w==", "mediaType": "x/y"}))
                            .unwrap(),
                        serde_json::from_value(json!({"url": "https://x/y", "filename": "f"}))
                            .unwrap(),
                        serde_json::from_value(json!({"data": {"k": [1, 2.5]}})).unwrap(),
                    ],
                    metadata: metadata.clone(),
                    extensions: vec!["https://example.com/ext/v1".into()],
                },
                Artifact {
                    artifact_id: "a2".into(),
                    parts: vec![Part::text("")],
                    ..Artifact::default()
                },
            ],
            history: vec![
                Message {
                    message_id: "m1".into(),
                    context_id: "ctx-é-1".into(),
                    task_id: "4f1a0c2e-8b7d-4c5e-9a3f-2d6b1e0f7a98".into(),
                    role: Role::User,
                    parts: vec![Part::text("hello")],
                    metadata: metadata.clone(),
                    ..Message::default()
                },
                Message {
                    message_id: "m2".into(),
                    role: Role::Agent,
                    parts: vec![Part::text("done")],
                    ..Message::default()
                },
            ],
            metadata,
        }
    }

    #[test]
    fn a_rich_task_round_trips_exactly() {
        let task = rich_task();
        let frozen = EncodedTask::encode(&task).unwrap();
        assert_eq!(frozen.state(), TaskState::Completed);
        assert_eq!(frozen.millis(), 1_774_000_000_123);
        assert_eq!(frozen.timestamp(), task.status.timestamp);
        assert_eq!(frozen.context_id(), "ctx-é-1".as_bytes());
        assert_eq!(frozen.decode(task.id.as_str()).unwrap(), task);
    }

    #[test]
    fn bare_tasks_round_trip() {
        for state in TaskState::ALL {
            let task = Task {
                id: "t".into(),
                status: TaskStatus {
                    state: *state,
                    ..TaskStatus::default()
                },
                ..Task::default()
            };
            let frozen = EncodedTask::encode(&task).unwrap();
            assert_eq!(frozen.state(), *state);
            assert_eq!((frozen.millis(), frozen.timestamp()), (0, None));
            assert_eq!(frozen.context_id(), b"");
            assert_eq!(frozen.decode("t").unwrap(), task);
        }
    }

    #[test]
    fn long_context_ids_round_trip() {
        for len in [0, 1, 127, 128, 300, 20_000] {
            let mut task = rich_task();
            task.context_id = "c".repeat(len).into();
            let frozen = EncodedTask::encode(&task).unwrap();
            assert_eq!(frozen.context_id(), task.context_id.as_str().as_bytes());
            assert_eq!(frozen.decode(task.id.as_str()).unwrap(), task);
        }
    }

    #[test]
    fn an_echo_task_is_small() {
        let id = "4f1a0c2e-8b7d-4c5e-9a3f-2d6b1e0f7a98";
        let ctx = "0b6d9a52-3c1e-4f7a-8e2d-5a9c0f1b3e74";
        let task = Task {
            id: id.into(),
            context_id: ctx.into(),
            status: TaskStatus::new(TaskState::Completed),
            artifacts: vec![Artifact::new([Part::text("echo: hello")]).with_name("echo")],
            history: vec![Message {
                message_id: "bench-message".into(),
                context_id: ctx.into(),
                task_id: id.into(),
                role: Role::User,
                parts: vec![Part::text("hello")],
                ..Message::default()
            }],
            ..Task::default()
        };
        let frozen = EncodedTask::encode(&task).unwrap();
        // The task's ProtoJSON without the id, with a 10-byte header instead of `"contextId":`.
        let json = serde_json::to_vec(&task).unwrap();
        assert_eq!(
            frozen.len(),
            json.len() - r#""id":"","contextId":"","#.len() - 36 + 10
        );
        assert!(frozen.len() <= 430, "{} bytes", frozen.len());
        assert_eq!(frozen.decode(id).unwrap(), task);
    }

    #[test]
    fn a_tasks_json_gives_the_same_encoding_as_the_task() {
        let mut tasks = vec![rich_task()];
        for (id, context) in [("a\"b\\c\n\u{1}é", "ctx \"q\""), ("t", ""), ("", "c")] {
            let mut task = rich_task();
            task.id = id.into();
            task.context_id = context.into();
            tasks.push(task);
        }
        for len in [127, 128, 20_000] {
            let mut task = rich_task();
            task.context_id = "c".repeat(len).into();
            tasks.push(task);
        }
        for state in TaskState::ALL {
            tasks.push(Task {
                id: "t".into(),
                status: TaskStatus::new(*state),
                ..Task::default()
            });
        }
        for task in &tasks {
            let json = crate::json::writer::to_vec(task).unwrap();
            let frozen = EncodedTask::from_json(task, &json);
            assert_eq!(frozen, EncodedTask::encode(task), "{task:?}");
            assert_eq!(frozen.unwrap().decode(task.id.as_str()).unwrap(), *task);
        }
    }

    #[test]
    fn json_that_is_not_the_tasks_is_refused() {
        let task = rich_task();
        let json = crate::json::writer::to_vec(&task).unwrap();
        let mut other = rich_task();
        other.id = "4f1a0c2e-8b7d-4c5e-9a3f-2d6b1e0f7a99".into();
        assert!(
            EncodedTask::from_json(&other, &json).is_none(),
            "another id"
        );
        other = rich_task();
        other.context_id = "ctx-é-2".into();
        assert!(
            EncodedTask::from_json(&other, &json).is_none(),
            "another context"
        );
        other.context_id = "".into();
        assert!(
            EncodedTask::from_json(&other, &json).is_none(),
            "no context"
        );
        let ids = json.windows(9).position(|w| w == br#""status":"#).unwrap();
        for cut in [0, 1, ids - 1, ids, ids + 3] {
            assert!(
                EncodedTask::from_json(&task, &json[..cut]).is_none(),
                "cut at {cut}"
            );
        }
        // What `encode` refuses, `from_json` refuses too.
        let mut fine = rich_task();
        fine.status.timestamp = fine
            .status
            .timestamp
            .map(|t| Timestamp(t.0 + chrono::Duration::microseconds(1)));
        let json = crate::json::writer::to_vec(&fine).unwrap();
        assert!(EncodedTask::from_json(&fine, &json).is_none());
    }

    #[test]
    fn tasks_that_would_not_round_trip_are_not_encoded() {
        let mut task = rich_task();
        task.status.timestamp = task
            .status
            .timestamp
            .map(|t| Timestamp(t.0 + chrono::Duration::microseconds(1)));
        assert!(EncodedTask::encode(&task).is_none());
        task.status.timestamp = Timestamp::from_millis(253_402_300_800_000); // year 10000
        assert!(EncodedTask::encode(&task).is_none());
        let mut deep = json!(1);
        for _ in 0..DEFAULT_MAX_DEPTH {
            deep = json!([deep]);
        }
        let mut task = rich_task();
        task.metadata.insert("deep".into(), deep.clone());
        assert!(EncodedTask::encode(&task).is_none());
        // Free-form JSON anywhere in the task is checked: a data part, message metadata.
        let mut task = rich_task();
        task.artifacts
            .push(Artifact::new([Part::data(deep.clone())]));
        assert!(EncodedTask::encode(&task).is_none());
        let mut task = rich_task();
        let mut message = Message::user_text("deep");
        message.metadata.insert("deep".into(), deep);
        task.history.push(message);
        assert!(EncodedTask::encode(&task).is_none());
    }

    #[test]
    fn encodings_reuse_no_state_between_tasks() {
        let small = Task {
            id: "s".into(),
            ..Task::default()
        };
        let a = EncodedTask::encode(&rich_task()).unwrap();
        let b = EncodedTask::encode(&small).unwrap();
        let c = EncodedTask::encode(&rich_task()).unwrap();
        assert_eq!(a, c);
        assert!(b.0.len() < a.0.len());
        assert_eq!(b.decode("s").unwrap(), small);
    }

    #[test]
    fn malformed_bytes_are_an_error_not_a_panic() {
        let good = EncodedTask::encode(&rich_task()).unwrap();
        for bytes in [
            &b""[..],
            &[0x83],
            &[0x83, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff],
            &[3, 0, 0, 0, 0, 0, 0, 0, 0, 5, b'a'],
            &[3, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, b'{', b'}'],
            &[3, 0, 0, 0, 0, 0, 0, 0, 0, 0, b'{'],
            &good.0[..good.0.len() - 1],
        ] {
            let frozen = EncodedTask::from_raw(bytes);
            let _ = (frozen.state(), frozen.timestamp(), frozen.context_id());
            assert!(
                matches!(frozen.decode("t"), Err(StoreError::Backend(_))),
                "{bytes:?}"
            );
        }
    }
}
