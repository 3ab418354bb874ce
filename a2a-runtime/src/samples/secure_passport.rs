//! The Secure Passport extension of the A2A samples (`extensions/secure-passport/v1`): a caller
//! shares a structured, optionally signed context — its **passport** — with the agent it calls.
//!
//! Wire format, exactly as the published specification shapes it:
//!
//! - URI (also the metadata key): `https://github.com/a2aproject/a2a-samples/tree/main/samples/python/extensions/secure-passport`.
//! - Card params: `{"supportedStateKeys": ["user_preferred_currency", "loyalty_tier"]}` — the
//!   `state` keys this agent understands ([`SecurePassport::supported_state_keys`]; omitted when
//!   empty, as the reference implementation does).
//! - The payload, [`CallerContext`], travels in the request **message**'s `metadata` under the
//!   URI: `{"clientId": "a2a://orchestrator-agent.com", "sessionId": "travel-session-xyz",
//!   "signature": "MOCK-SIG-123456...", "state": {"user_preferred_currency": "GBP"}}` —
//!   `clientId` and `state` required, `sessionId` and `signature` optional, nothing else.
//!
//! Behaviour, when a client activates the extension:
//!
//! - **Server** ("server middleware" in the spec): before the agent runs, the passport is read
//!   from the incoming message and validated; the agent reads it typed as its activation value,
//!   `ctx.extension::<SecurePassport>()` → [`Passport`]. No passport is fine (it is optional); a
//!   malformed one (missing or mistyped field, unknown field, empty `clientId`) is refused with
//!   InvalidParams (-32602), as the spec's security rules treat extension data as untrusted. A
//!   signature is checked by the verifier given with [`SecurePassport::verify_with`]: a
//!   signature it rejects refuses the request; the outcome is [`Passport::verification`].
//! - **Client** ("client middleware"): an extension built with [`SecurePassport::caller`]
//!   attaches that passport to every outgoing message that carries none.
//!
//! The extension puts nothing on responses: the specification defines no response data.
//!
//! # Example
//!
//! An agent that reads the passport, and a client that sends one:
//!
//! ```standalone_crate
//! use a2a_runtime::core::{AgentContext, AgentExecutor, EventSink};
//! use a2a_runtime::extension::{Extension, MetadataExt};
//! use a2a_runtime::samples::secure_passport::{CallerContext, SecurePassport, Verification};
//! use a2a_runtime::server::A2aServer;
//! use a2a_runtime::types::{AgentCard, Message};
//! use a2a_runtime::A2aError;
//!
//! struct Travel;
//!
//! impl AgentExecutor for Travel {
//!     async fn execute(&self, ctx: AgentContext, events: EventSink) -> Result<(), A2aError> {
//!         let passport = ctx.extension::<SecurePassport>().unwrap_or_default();
//!         let reply = match (&passport.caller, passport.verification) {
//!             (Some(caller), Verification::Verified) => {
//!                 let currency = caller.state_str("user_preferred_currency").unwrap_or("USD");
//!                 format!("prices in {currency} for {}", caller.client_id)
//!             }
//!             (Some(_), _) => "unverified passport: public prices only".to_owned(),
//!             (None, _) => "no passport".to_owned(),
//!         };
//!         events.reply(Message::agent_text(reply)).await
//!     }
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // The agent declares the state keys it understands, and checks signatures.
//! let passport = SecurePassport::new(["user_preferred_currency", "loyalty_tier"])
//!     .verify_with(|ctx: &CallerContext| {
//!         match ctx.signature.as_deref() {
//!             Some("MOCK-SIG-123456...") => Ok(()), // a real agent checks a cryptographic signature
//!             _ => Err("unknown signer".to_owned()),
//!         }
//!     });
//! let card = AgentCard { name: "Travel".into(), description: "Books trips".into(), version: "1.0.0".into(), ..Default::default() };
//! let server = A2aServer::builder().card(card).executor(Travel).extension(passport).build()?;
//!
//! // The card declares it with the spec's params.
//! let declared = &server.card().capabilities.extensions[0];
//! assert_eq!(declared.uri, SecurePassport::URI);
//! assert_eq!(
//!     serde_json::to_value(&declared.params)?,
//!     serde_json::json!({"supportedStateKeys": ["user_preferred_currency", "loyalty_tier"]}),
//! );
//!
//! // A caller attaches its passport to a message (an `A2aClient` built with
//! // `.extension(SecurePassport::caller(ctx))` does this on every call).
//! let ctx = CallerContext::new("a2a://orchestrator-agent.com")
//!     .with_session_id("travel-session-xyz")
//!     .with_signature("MOCK-SIG-123456...")
//!     .with_state("user_preferred_currency", "GBP");
//! let mut message = Message::user_text("Book a flight for me.");
//! message.set_metadata_of::<SecurePassport>(&ctx);
//! assert_eq!(message.metadata_of::<SecurePassport>()?, Some(ctx));
//! # Ok(()) }
//! ```

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::a2a_extension;
use crate::error::A2aError;
use crate::extension::{ExtensionHooks, MetadataExt, RequestContext};
use crate::protocol::A2aRequest;
use crate::types::Message;

/// The Secure Passport payload (`CallerContext` in the specification): who is calling, and the
/// context it shares.
///
/// Serialized with the spec's camelCase names; absent optional fields are omitted. Unknown
/// fields are rejected (as the reference implementation does); the snake_case names the
/// reference implementation also accepts (`client_id`, `session_id`) are accepted on input.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CallerContext {
    /// REQUIRED. The verifiable unique identifier of the calling agent (e.g.
    /// `a2a://orchestrator-agent.com`).
    #[serde(alias = "client_id")]
    pub client_id: String,
    /// A session or conversation identifier, for thread continuity.
    #[serde(default, alias = "session_id", skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// A digital signature of the whole `state` object, by the calling agent's private key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// REQUIRED. Free-form contextual data (user preferences, loyalty tier, ...).
    pub state: Map<String, Value>,
}

impl CallerContext {
    /// A passport for `client_id`, with an empty state.
    pub fn new(client_id: impl Into<String>) -> Self {
        Self {
            client_id: client_id.into(),
            ..Self::default()
        }
    }

    /// Sets the session id.
    pub fn with_session_id(mut self, session_id: impl Into<String>) -> Self {
        self.session_id = Some(session_id.into());
        self
    }

    /// Sets the signature.
    pub fn with_signature(mut self, signature: impl Into<String>) -> Self {
        self.signature = Some(signature.into());
        self
    }

    /// Adds one `state` entry.
    pub fn with_state(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.state.insert(key.into(), value.into());
        self
    }

    /// True when the passport carries a signature (not that the signature is valid: see
    /// [`Verification`]).
    pub fn is_signed(&self) -> bool {
        self.signature.is_some()
    }

    /// A `state` entry that is a string.
    pub fn state_str(&self, key: &str) -> Option<&str> {
        self.state.get(key).and_then(Value::as_str)
    }

    /// Checks what the types cannot: a non-empty `clientId`.
    pub fn validate(&self) -> Result<(), String> {
        if self.client_id.trim().is_empty() {
            return Err("clientId must not be empty".to_owned());
        }
        Ok(())
    }
}

/// How far the agent can trust a passport's `state`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Verification {
    /// No passport, or a passport without a signature.
    #[default]
    Unsigned,
    /// Signed, but no verifier is configured: nothing was checked.
    Unchecked,
    /// Signed, and the configured verifier accepted the signature.
    Verified,
}

/// What the agent sees of the Secure Passport for one request: its activation value, read with
/// `ctx.extension::<SecurePassport>()`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Passport {
    /// The caller's context, when the message carried one.
    pub caller: Option<CallerContext>,
    /// Whether its signature was checked.
    pub verification: Verification,
}

impl Passport {
    /// True when a configured verifier accepted the passport's signature.
    pub fn is_verified(&self) -> bool {
        self.verification == Verification::Verified
    }
}

/// Checks a passport's signature: `Err(reason)` refuses the request.
pub type Verifier = Arc<dyn Fn(&CallerContext) -> Result<(), String> + Send + Sync>;

/// Secure Passport: callers share a verifiable context with this agent.
///
/// Its one param is `supportedStateKeys`; the verifier and the client-side passport are
/// configuration, not published in the card. Off unless added with `.extension(..)` to a server
/// or client builder. See the [module documentation](self) for the wire format and behaviour.
#[a2a_extension(
    uri = "https://github.com/a2aproject/a2a-samples/tree/main/samples/python/extensions/secure-passport",
    metadata = CallerContext,
    description = "Receives the caller's Secure Passport (CallerContext) from message metadata."
)]
#[derive(Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecurePassport {
    /// The `state` keys this agent understands and is optimized to use (card param
    /// `supportedStateKeys`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub supported_state_keys: Vec<String>,
    /// Checks signatures (server side).
    #[serde(skip)]
    verifier: Option<Verifier>,
    /// The passport attached to outgoing messages (client side).
    #[serde(skip)]
    caller: Option<CallerContext>,
}

impl fmt::Debug for SecurePassport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecurePassport")
            .field("supported_state_keys", &self.supported_state_keys)
            .field("verifier", &self.verifier.as_ref().map(|_| "<fn>"))
            .field("caller", &self.caller)
            .finish()
    }
}

impl SecurePassport {
    /// The extension for an agent that understands these `state` keys.
    pub fn new<I, S>(supported_state_keys: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            supported_state_keys: supported_state_keys.into_iter().map(Into::into).collect(),
            ..Self::default()
        }
    }

    /// The extension for a client: attaches `passport` to every outgoing message that has none.
    pub fn caller(passport: CallerContext) -> Self {
        Self {
            caller: Some(passport),
            ..Self::default()
        }
    }

    /// Checks the signature of every signed passport with `verifier`; a rejected signature
    /// refuses the request with InvalidParams.
    pub fn verify_with(
        mut self,
        verifier: impl Fn(&CallerContext) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.verifier = Some(Arc::new(verifier));
        self
    }

    /// Attaches `passport` to `message` (the spec's `add_secure_passport`); also lists the
    /// extension in the message's `extensions`.
    pub fn attach(message: &mut Message, passport: &CallerContext) {
        message.set_metadata_of::<Self>(passport);
    }

    /// Reads and validates the passport of `message` (the spec's `get_secure_passport`):
    /// `Ok(None)` when absent, an InvalidParams error when malformed.
    pub fn extract(message: &Message) -> Result<Option<CallerContext>, A2aError> {
        let field = || {
            format!(
                "message.metadata[{:?}]",
                <Self as crate::extension::Extension>::METADATA_KEY
            )
        };
        let passport = message.metadata_of::<Self>().map_err(|e| {
            A2aError::invalid_field(field(), format!("malformed Secure Passport: {}", e.source))
        })?;
        if let Some(p) = &passport {
            p.validate().map_err(|e| {
                A2aError::invalid_field(field(), format!("malformed Secure Passport: {e}"))
            })?;
        }
        Ok(passport)
    }

    /// Reads, validates and (when signed and a verifier is configured) verifies the passport
    /// of `message`.
    pub fn read(&self, message: &Message) -> Result<Passport, A2aError> {
        let Some(caller) = Self::extract(message)? else {
            return Ok(Passport::default());
        };
        let verification = match (&caller.signature, &self.verifier) {
            (None, _) => Verification::Unsigned,
            (Some(_), None) => Verification::Unchecked,
            (Some(_), Some(verify)) => {
                verify(&caller).map_err(|reason| {
                    A2aError::invalid_field(
                        format!(
                            "message.metadata[{:?}].signature",
                            <Self as crate::extension::Extension>::METADATA_KEY
                        ),
                        format!("the Secure Passport signature was rejected: {reason}"),
                    )
                })?;
                Verification::Verified
            }
        };
        Ok(Passport {
            caller: Some(caller),
            verification,
        })
    }
}

impl ExtensionHooks for SecurePassport {
    type Activation = Passport;

    // The client attaches the caller's passport; only the server reads and verifies it.
    const RUNS_IN_CLIENT: bool = true;

    fn handle_request(
        &self,
        request: &mut A2aRequest,
        passport: &mut Passport,
        ctx: &RequestContext,
    ) -> Result<(), A2aError> {
        let Some(message) = request.message() else {
            return Ok(());
        };
        if let Some(caller) = &self.caller
            && !message.has_metadata_of::<Self>()
        {
            Self::attach(message, caller);
        }
        if ctx.side == crate::protocol::Side::Server {
            *passport = self.read(message)?;
        }
        Ok(())
    }
}
