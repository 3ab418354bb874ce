//! Failures: the error envelope of the A2A CLI specification (Appendix B), its codes (the A2A
//! error name for a protocol failure, an `A2ACLI_ERR_*` code for the CLI's own) and the exit
//! status each maps to (§9.6).

use std::io::Write as _;

use a2a_runtime::A2aError;
use a2a_runtime::client::ClientError;
use serde_json::{Value, json};

/// Exit status: the CLI could not complete the operation.
pub(crate) const EXIT_FAILURE: u8 = 1;
/// Exit status: invalid arguments, flags or flag combination.
pub(crate) const EXIT_USAGE: u8 = 2;
/// Exit status: the agent or its card could not be reached or resolved.
pub(crate) const EXIT_UNREACHABLE: u8 = 3;
/// Exit status: authentication could not be completed.
pub(crate) const EXIT_AUTH: u8 = 4;
/// Exit status: `--timeout` expired before a terminal state.
pub(crate) const EXIT_TIMEOUT: u8 = 5;
/// Exit status: interrupted by the caller (Ctrl-C), as shells report SIGINT.
pub(crate) const EXIT_INTERRUPTED: u8 = 130;

/// The CLI-local error codes (SPEC.md Appendix E).
pub(crate) const USAGE: &str = "A2ACLI_ERR_USAGE";
pub(crate) const CARD_NOT_FOUND: &str = "A2ACLI_ERR_CARD_NOT_FOUND";
pub(crate) const CARD_INVALID: &str = "A2ACLI_ERR_CARD_INVALID";
pub(crate) const UNREACHABLE: &str = "A2ACLI_ERR_UNREACHABLE";
pub(crate) const CREDENTIALS_MISSING: &str = "A2ACLI_ERR_CREDENTIALS_MISSING";
pub(crate) const AUTH_FAILED: &str = "A2ACLI_ERR_AUTH_FAILED";
pub(crate) const TIMEOUT: &str = "A2ACLI_ERR_TIMEOUT";
pub(crate) const INTERNAL: &str = "A2ACLI_ERR_INTERNAL";

/// How a command failed: the envelope's fields and the exit status.
#[derive(Debug)]
pub(crate) struct Failure {
    /// The A2A error name (`TaskNotFoundError`) or an `A2ACLI_ERR_*` code.
    pub(crate) code: String,
    pub(crate) message: String,
    /// A next step, ideally a command to copy.
    pub(crate) hint: Option<String>,
    /// The transport-level code (JSON-RPC error code or HTTP status), when there is one.
    pub(crate) a2a_code: Option<Value>,
    pub(crate) exit: u8,
}

impl Failure {
    pub(crate) fn new(code: &str, exit: u8, message: impl Into<String>) -> Self {
        Self {
            code: code.to_owned(),
            message: message.into(),
            hint: None,
            a2a_code: None,
            exit,
        }
    }

    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Self::new(USAGE, EXIT_USAGE, message).hint("run `a2a help` or `a2a <command> --help`")
    }

    pub(crate) fn internal(message: impl Into<String>) -> Self {
        Self::new(INTERNAL, EXIT_FAILURE, message)
    }

    pub(crate) fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// The envelope of Appendix B.
    pub(crate) fn envelope(&self) -> Value {
        json!({
            "error": {
                "code": self.code,
                "message": self.message,
                "hint": self.hint,
                "a2aCode": self.a2a_code,
            }
        })
    }

    /// Reports the failure: the envelope on stdout (one line) under `-o json`, and the same
    /// fields as `Label: value` lines on stderr in every mode.
    pub(crate) fn report(&self, json: bool) {
        if json {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", self.envelope());
            let _ = out.flush();
        }
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "Error: {}", self.code);
        let _ = writeln!(err, "Message: {}", one_line(&self.message));
        if let Some(hint) = &self.hint {
            let _ = writeln!(err, "Hint: {hint}");
        }
        if let Some(code) = &self.a2a_code {
            let _ = writeln!(err, "A2A Code: {code}");
        }
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The A2A name of a protocol error (A2A §3.3.2 and the JSON-RPC errors of §5.4), or `None`
/// for the runtime's own conditions that the protocol does not name.
pub(crate) fn a2a_name(e: &A2aError) -> Option<&'static str> {
    Some(match e {
        A2aError::TaskNotFound { .. } => "TaskNotFoundError",
        A2aError::TaskNotCancelable { .. } => "TaskNotCancelableError",
        A2aError::PushNotificationNotSupported => "PushNotificationNotSupportedError",
        A2aError::UnsupportedOperation(_) => "UnsupportedOperationError",
        A2aError::ContentTypeNotSupported(_) => "ContentTypeNotSupportedError",
        A2aError::InvalidAgentResponse(_) => "InvalidAgentResponseError",
        A2aError::ExtendedAgentCardNotConfigured => "ExtendedAgentCardNotConfiguredError",
        A2aError::ExtensionSupportRequired { .. } | A2aError::ExtensionDependencyMissing { .. } => {
            "ExtensionSupportRequiredError"
        }
        A2aError::VersionNotSupported { .. } => "VersionNotSupportedError",
        A2aError::Parse(_) => "JSONParseError",
        A2aError::InvalidRequest(_) => "InvalidRequestError",
        A2aError::MethodNotFound { .. } => "MethodNotFoundError",
        A2aError::InvalidParams { .. } => "InvalidParamsError",
        A2aError::Internal(_)
        | A2aError::InternalCause { .. }
        | A2aError::InternalLogged { .. } => "InternalError",
        _ => return None,
    })
}

/// Turns a client error into a failure. `credentials` says whether the caller supplied any (an
/// authentication refusal is then `AUTH_FAILED`, else `CREDENTIALS_MISSING`).
pub(crate) fn from_client(e: ClientError, credentials: bool) -> Failure {
    let auth_code = if credentials {
        AUTH_FAILED
    } else {
        CREDENTIALS_MISSING
    };
    let auth_hint = if credentials {
        "check the credential (--bearer / A2ACLI_BEARER, --api-key / A2ACLI_API_KEY)"
    } else {
        "pass a credential: --bearer TOKEN (or A2ACLI_BEARER), --api-key KEY (or A2ACLI_API_KEY)"
    };
    match &e {
        ClientError::Timeout { .. } => Failure::new(TIMEOUT, EXIT_TIMEOUT, e.to_string())
            .hint("raise --request-timeout, or check that the agent is answering"),
        ClientError::Transport { .. } => {
            Failure::new(UNREACHABLE, EXIT_UNREACHABLE, with_causes(&e))
                .hint("check the agent's address (--agent-card) and that it is running")
        }
        ClientError::Http { status, .. } => {
            let mut f = if matches!(status, 401 | 403) {
                Failure::new(auth_code, EXIT_AUTH, e.to_string()).hint(auth_hint)
            } else {
                Failure::internal(e.to_string()).hint("run again with --debug to see the exchange")
            };
            f.a2a_code = Some(json!(status));
            f
        }
        ClientError::InvalidResponse(_) => {
            Failure::new("InvalidAgentResponseError", EXIT_FAILURE, e.to_string())
                .hint("run again with --debug to see the exchange")
        }
        ClientError::Agent(a) => {
            let inner = a.error();
            let mut f = match inner {
                A2aError::Unauthenticated { .. } | A2aError::PermissionDenied(_) => {
                    Failure::new(auth_code, EXIT_AUTH, a.message()).hint(auth_hint)
                }
                other => match a2a_name(other) {
                    Some(name) => Failure::new(name, EXIT_FAILURE, a.message()),
                    // A runtime condition the protocol does not name: a vendor code.
                    None => Failure::new(
                        &format!("A2ARS_{}", a.reason().unwrap_or("ERROR")),
                        EXIT_FAILURE,
                        a.message(),
                    ),
                },
            };
            if f.hint.is_none() {
                f.hint = Some(match inner {
                    A2aError::TaskNotFound { .. } => {
                        "check the task id (`a2a task list`); run again with --debug for the exchange".into()
                    }
                    A2aError::ExtensionSupportRequired { uris } => {
                        format!("activate the extension: --extension {}", uris.join(" --extension "))
                    }
                    _ => "run again with --debug to see the exchange".into(),
                });
            }
            f.a2a_code = Some(json!(a.code()));
            f
        }
        ClientError::Local(inner) => {
            let name = a2a_name(inner).unwrap_or(INTERNAL);
            let f = Failure::new(name, EXIT_FAILURE, e.to_string());
            match inner {
                A2aError::ExtensionSupportRequired { uris } => f.hint(format!(
                    "activate the extension: --extension {}",
                    uris.join(" --extension ")
                )),
                _ => f,
            }
        }
        _ => Failure::internal(e.to_string()),
    }
}

/// The error and its chain of causes, on one line (a transport error's cause is where the
/// useful part is: "connection refused", "dns error").
pub(crate) fn with_causes(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !s.contains(&text) {
            s.push_str(": ");
            s.push_str(&text);
        }
        source = cause.source();
    }
    s
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Failure::internal(format!("could not write the output: {e}"))
    }
}
