//! What an agent or an extension author writes with, in one import:
//!
//! ```
//! use a2a_runtime::prelude::*;
//!
//! struct Echo;
//!
//! impl AgentExecutor for Echo {
//!     async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
//!         events.artifact(Artifact::new([Part::text(ctx.text())])).await?;
//!         events.complete().await
//!     }
//! }
//!
//! /// Asks the agent for a tone of voice.
//! #[a2a_extension(uri = "https://example.com/ext/tone/v1", metadata = String)]
//! #[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
//! struct Tone {}
//!
//! # fn main() {
//! assert_eq!(Tone::URI, "https://example.com/ext/tone/v1");
//! let mut message = Message::user_text("hi");
//! message.set_metadata_of::<Tone>(&"warm".to_owned());
//! assert_eq!(message.metadata_of::<Tone>().unwrap().as_deref(), Some("warm"));
//! # }
//! ```
//!
//! It holds the agent API (`AgentExecutor`, `AgentContext`, `EventSink`), the server, the data
//! types a reply is made of, the error, the extension attribute and the traits that give
//! `E::URI`, typed metadata (`metadata_of::<E>()`, `set_metadata_of::<E>(..)`) and the hooks.

#[cfg(feature = "server")]
pub use crate::core::{AgentContext, AgentExecutor, EventSink};
pub use crate::error::A2aError;
pub use crate::extension::{
    Activate, AgentCardExt as _, Extension, ExtensionHooks, HasMetadata as _, MetadataExt as _,
    Reply, RequestContext,
};
#[cfg(feature = "server")]
pub use crate::server::A2aServer;
pub use crate::types::{
    AgentCapabilities, AgentCard, AgentSkill, Artifact, Message, Part, Role, Task, TaskState,
    TaskStatus,
};
pub use a2a_macros::a2a_extension;

#[cfg(feature = "client")]
pub use crate::client::A2aClient;
