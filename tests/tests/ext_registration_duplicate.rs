#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Two extension types with one URI: the server refuses to build, naming both types — given
//! explicitly, or both linked into the binary.

use a2a_runtime::A2aError;
use a2a_runtime::a2a_extension;
use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
use a2a_runtime::extension::RegistryError;
use a2a_runtime::server::{A2aServer, A2aServerBuilder, BuildError};
use a2a_runtime::types::AgentCard;
use serde::{Deserialize, Serialize};

const URI: &str = "https://dup.example/ext/same/v1";

/// One of two.
#[a2a_extension(uri = "https://dup.example/ext/same/v1")]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct First {}

/// Two of two.
#[a2a_extension(uri = "https://dup.example/ext/same/v1")]
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Second {}

struct Agent;

impl AgentExecutor for Agent {
    async fn execute(&self, _: AgentContext, events: EventSink) -> Result<(), A2aError> {
        events.complete().await
    }
}

fn builder() -> A2aServerBuilder {
    A2aServer::builder()
        .card(AgentCard {
            name: "dup".into(),
            description: "d".into(),
            version: "1".into(),
            ..AgentCard::default()
        })
        .executor(Agent)
}

#[track_caller]
fn assert_names_both(result: Result<A2aServer, BuildError>, first: &str, second: &str) {
    let err = result.expect_err("two types with one URI");
    let text = err.to_string();
    match err {
        BuildError::Extensions(RegistryError::DuplicateUri {
            uri,
            first: a,
            second: b,
        }) => {
            assert_eq!(uri, URI);
            assert_eq!((a.as_str(), b.as_str()), (first, second));
        }
        other => panic!("{other:?}"),
    }
    assert!(
        text.contains(first) && text.contains(second) && text.contains(URI),
        "{text}"
    );
}

#[test]
fn explicit_duplicates_fail_naming_both() {
    assert_names_both(
        builder()
            .linked_extensions(false)
            .extension(First {})
            .extension(Second {})
            .build(),
        "ext_registration_duplicate::First",
        "ext_registration_duplicate::Second",
    );
    // The same type twice is one extension, not a conflict.
    let card = builder()
        .linked_extensions(false)
        .extension(First {})
        .extension(First {})
        .build()
        .unwrap()
        .card();
    assert_eq!(card.capabilities.extensions.len(), 1);
}

#[test]
fn linked_duplicates_fail_naming_both() {
    assert_names_both(
        builder().linked_extensions(true).build(),
        "ext_registration_duplicate::First",
        "ext_registration_duplicate::Second",
    );
    // Excluding the URI, or choosing one type explicitly, resolves it.
    assert!(
        builder()
            .linked_extensions(true)
            .exclude([URI])
            .build()
            .unwrap()
            .card()
            .capabilities
            .extensions
            .is_empty()
    );
    let card = builder()
        .linked_extensions(true)
        .extension(Second {})
        .build()
        .unwrap()
        .card();
    assert_eq!(card.capabilities.extensions.len(), 1);
}
