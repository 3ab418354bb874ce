#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The attribute's output uses absolute paths only: it compiles beside items that shadow the
//! prelude and the crates it names.

mod user {
    #![allow(dead_code, non_camel_case_types, unreachable_pub)]

    pub struct Option;
    pub struct Result;
    pub struct Box;
    pub struct Vec;
    pub struct String;
    pub struct Send;
    pub struct Sync;
    mod inventory {}
    mod serde {}
    mod serde_json {}
    mod a2a_runtime {}
    mod core {}
    mod std {}

    /// Shadowed everything.
    #[::a2a_runtime::a2a_extension(uri = "https://hygiene.example/ext/plain/v1", metadata = u64)]
    #[derive(Debug, Default, ::serde::Serialize, ::serde::Deserialize)]
    pub struct Plain {
        pub level: u32,
    }

    /// With hooks.
    #[::a2a_runtime::a2a_extension(uri = "https://hygiene.example/ext/hooked/v1", required = true)]
    #[derive(Debug, Default, ::serde::Serialize, ::serde::Deserialize)]
    pub struct Hooked {}

    impl ::a2a_runtime::extension::ExtensionHooks for Hooked {
        type Activation = u8;
    }
}

use a2a_runtime::extension::{Extension, ExtensionRegistry, MetadataExt};
use a2a_runtime::types::Message;

#[test]
fn expands_and_works_beside_shadowing_items() {
    assert_eq!(user::Plain::URI, "https://hygiene.example/ext/plain/v1");
    assert_eq!(user::Plain::DESCRIPTION, "Shadowed everything.");
    const { assert!(user::Hooked::REQUIRED) };
    let decl = user::Plain { level: 3 }.declaration();
    assert_eq!(decl.params.get("level"), Some(&serde_json::json!(3)));
    let mut m = Message::user_text("x");
    m.set_metadata_of::<user::Plain>(&9);
    assert_eq!(m.metadata_of::<user::Plain>().unwrap(), Some(9));
    let uris: std::vec::Vec<&str> = ExtensionRegistry::linked().iter().map(|r| r.uri).collect();
    assert_eq!(
        uris,
        [
            "https://hygiene.example/ext/hooked/v1",
            "https://hygiene.example/ext/plain/v1"
        ]
    );
    // Both are usable by a server; the required one is enforced.
    let server = a2a_runtime::server::A2aServer::builder()
        .card(a2a_runtime::types::AgentCard {
            name: "h".into(),
            description: "d".into(),
            version: "1".into(),
            ..Default::default()
        })
        .executor(Agent)
        .linked_extensions(true)
        .extension(user::Hooked {})
        .build()
        .unwrap();
    let exts = server.card().capabilities.extensions;
    assert_eq!(exts.len(), 2);
    assert!(exts.iter().any(|e| e.required));
}

struct Agent;

impl a2a_runtime::core::AgentExecutor for Agent {
    async fn execute(
        &self,
        _: a2a_runtime::core::AgentContext,
        events: a2a_runtime::core::EventSink,
    ) -> Result<(), a2a_runtime::A2aError> {
        events.complete().await
    }
}
