//! Data-only extensions: structured information in the agent card, nothing else.
//!
//! The attribute is the whole extension: the struct's fields are published as the declaration's
//! `params` in `capabilities.extensions`, and clients read them back typed. It is activated (and
//! echoed) when a client requests it, and never changes requests or responses. Data-only
//! extensions should not be `required`.
//!
//! ```
//! use a2a_runtime::a2a_extension;
//! use a2a_runtime::server::A2aServer;
//! use a2a_runtime::types::AgentCard;
//! use serde::{Deserialize, Serialize};
//!
//! /// GDPR facts about this agent.
//! #[a2a_extension(uri = "https://example.com/ext/gdpr/v1")]
//! #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
//! struct Gdpr {
//!     data_controller: String,
//!     retention_days: u32,
//! }
//!
//! # struct Echo;
//! # impl a2a_runtime::core::AgentExecutor for Echo {
//! #     async fn execute(&self, _: a2a_runtime::core::AgentContext, e: a2a_runtime::core::EventSink) -> Result<(), a2a_runtime::A2aError> { e.complete().await }
//! # }
//! let gdpr = Gdpr { data_controller: "Example AS".into(), retention_days: 30 };
//! let card = AgentCard { name: "n".into(), description: "d".into(), version: "1".into(), ..Default::default() };
//! let server = A2aServer::builder().card(card).executor(Echo).linked_extensions(false).extension(gdpr.clone()).build()?;
//!
//! // A client reads the params back typed.
//! let served = server.card();
//! let decl = served.capabilities.extensions.iter().find(|e| e.uri == "https://example.com/ext/gdpr/v1").unwrap();
//! let params: Gdpr = serde_json::from_value(serde_json::Value::Object(decl.params.0.clone()))?;
//! assert_eq!(params, gdpr);
//! assert_eq!(decl.description, "GDPR facts about this agent.");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
