//! The other front ends: v0.3 over JSON-RPC and gRPC go through the same guard.

use a2a_runtime::auth::StaticTokens;
use a2a_runtime::server::{A2aServer, RunningServer};
use serde_json::{Value, json};

use super::*;

/// A server requiring `Bearer tok-alice`, with the gRPC binding on a port of its own.
async fn guarded_with_grpc() -> RunningServer {
    A2aServer::builder()
        .card(card())
        .executor(Agent)
        .push(a2a_runtime::push::PushConfig::new().allow_private_networks(true))
        .authenticator(StaticTokens::bearer().token("alice", "tok-alice"))
        .grpc_addr("127.0.0.1:0")
        .workers(1)
        .build()
        .unwrap()
        .start("127.0.0.1:0")
        .await
        .unwrap()
}

#[tokio::test]
async fn a_v0_3_send_without_a_token_gets_the_same_refusal_as_v1_0() {
    let running = guarded_with_grpc().await;
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let url = format!("{}/", running.url());
    let v03 = json!({"jsonrpc": "2.0", "id": 7, "method": "message/send", "params": {
        "message": {"kind": "message", "messageId": "v03-1", "role": "user",
                    "parts": [{"kind": "text", "text": "hi"}]}}});
    let v10 =
        json!({"jsonrpc": "2.0", "id": 8, "method": "SendMessage", "params": msg("hi", None)});
    let post = |body: &Value, version: Option<&str>, token: Option<&str>| {
        let mut req = http
            .post(&url)
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(v) = version {
            req = req.header("A2A-Version", v);
        }
        if let Some(t) = token {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        req.send()
    };
    let mut refusals = Vec::new();
    for (body, version) in [(&v03, None), (&v10, Some("1.0"))] {
        for token in [None, Some("tok-mallory")] {
            let r = post(body, version, token).await.unwrap();
            let status = r.status().as_u16();
            let challenge = r.headers()["www-authenticate"].to_str().unwrap().to_owned();
            let body: Value = r.json().await.unwrap();
            refusals.push((status, challenge, body["error"].clone(), body["id"].clone()));
        }
    }
    assert_eq!(refusals[0].0, 401, "{refusals:?}");
    assert_eq!(refusals[0].2["code"], -31401, "{refusals:?}");
    assert!(refusals.iter().all(|r| *r == refusals[0]), "{refusals:?}");
    // With the token, the v0.3 call is served (a v0.3 result: `kind` members).
    let ok: Value = post(&v03, None, Some("tok-alice"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(ok["id"], 7, "{ok}");
    assert_eq!(ok["result"]["kind"], "task", "{ok}");
    running.stop().await;
}

#[tokio::test]
async fn a_grpc_call_without_a_token_is_unauthenticated() {
    use a2a_runtime::grpc::pb;
    use a2a_runtime::grpc::pb::a2a_service_client::A2aServiceClient;
    let running = guarded_with_grpc().await;
    let channel =
        tonic::transport::Endpoint::from_shared(format!("http://{}", running.grpc_addr().unwrap()))
            .unwrap()
            .connect_lazy();
    let mut client = A2aServiceClient::new(channel);
    let send = |token: Option<&str>| {
        let mut req = tonic::Request::new(pb::SendMessageRequest::from(
            a2a_runtime::types::SendMessageRequest {
                message: a2a_runtime::types::Message::user_text("hi"),
                ..Default::default()
            },
        ));
        req.metadata_mut().insert(
            "a2a-version",
            tonic::metadata::MetadataValue::from_static("1.0"),
        );
        if let Some(t) = token {
            req.metadata_mut()
                .insert("authorization", format!("Bearer {t}").parse().unwrap());
        }
        req
    };
    for token in [None, Some("tok-mallory")] {
        let status = client.send_message(send(token)).await.unwrap_err();
        assert_eq!(status.code(), tonic::Code::Unauthenticated, "{status:?}");
    }
    // Streams and reads are guarded too, before anything runs.
    let status = client
        .get_task(tonic::Request::new(pb::GetTaskRequest {
            id: "t-1".into(),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::Unauthenticated, "{status:?}");
    // With the token: served.
    let sent = client
        .send_message(send(Some("tok-alice")))
        .await
        .unwrap()
        .into_inner();
    assert!(
        matches!(
            sent.payload,
            Some(pb::send_message_response::Payload::Task(_))
        ),
        "{sent:?}"
    );
    running.stop().await;
}
