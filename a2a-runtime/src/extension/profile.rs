//! Profile extensions: rules and data on top of the core protocol.
//!
//! A profile narrows what requests may contain (validating extension data in `metadata`) and adds
//! data to responses. It implements [`ExtensionHooks`](super::ExtensionHooks):
//! `handle_request` runs before every operation (and may refuse it with an error in the
//! binding's shape), `handle_response` runs on every result and every streamed event, and
//! `handle_event` sees the agent's events before they are stored. Extension data is read and
//! written typed with [`MetadataExt`](super::MetadataExt), which also keeps the object's
//! `extensions` list right.
//!
//! ```
//! use a2a_runtime::a2a_extension;
//! use a2a_runtime::extension::{ExtensionHooks, MetadataExt, Reply, RequestContext};
//! use a2a_runtime::protocol::A2aRequest;
//! use a2a_runtime::types::SendMessageResponse;
//! use a2a_runtime::A2aError;
//! use serde::{Deserialize, Serialize};
//!
//! /// Clients say which currency they want prices in; results carry it.
//! #[a2a_extension(uri = "https://example.com/ext/currency/v1", metadata = String)]
//! #[derive(Default, Serialize, Deserialize)]
//! struct Currency {
//!     accepted: Vec<String>,
//! }
//!
//! impl ExtensionHooks for Currency {
//!     /// The currency of this request.
//!     type Activation = Option<String>;
//!
//!     fn handle_request(&self, req: &mut A2aRequest, chosen: &mut Option<String>, _: &RequestContext) -> Result<(), A2aError> {
//!         let Some(message) = req.message() else { return Ok(()) };
//!         let code = message
//!             .metadata_of::<Currency>()
//!             .map_err(|e| A2aError::invalid_field("message.metadata", e.to_string()))?
//!             .ok_or_else(|| A2aError::invalid_field("message.metadata", "a currency is required"))?;
//!         if !self.accepted.contains(&code) {
//!             return Err(A2aError::invalid_field("message.metadata", format!("{code} is not accepted")));
//!         }
//!         *chosen = Some(code);
//!         Ok(())
//!     }
//!
//!     fn handle_response(&self, reply: &mut Reply<'_>, chosen: &mut Option<String>, _: &a2a_runtime::protocol::A2aRequest, _: &a2a_runtime::extension::RequestContext) -> Result<(), A2aError> {
//!         if let (Reply::SendMessage(SendMessageResponse::Task(task)), Some(code)) = (reply, chosen.as_ref()) {
//!             task.set_metadata_of::<Currency>(code);
//!         }
//!         Ok(())
//!     }
//! }
//! ```
