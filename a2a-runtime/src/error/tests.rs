//! Unit tests of [`A2aError`](super::A2aError): codes, wire forms and round trips.
#![allow(clippy::unwrap_used)]
use super::*;

/// The v1.0.1 mapping table, row by row.
#[test]
fn every_a2a_error_maps_per_the_v1_0_1_table() {
    let rows: Vec<(A2aError, &str, i32, &str, u16)> = vec![
        (
            A2aError::TaskNotFound {
                task_id: "t".into(),
            },
            "TASK_NOT_FOUND",
            -32001,
            "NOT_FOUND",
            404,
        ),
        (
            A2aError::TaskNotCancelable {
                task_id: "t".into(),
                state: "TASK_STATE_COMPLETED".into(),
            },
            "TASK_NOT_CANCELABLE",
            -32002,
            "FAILED_PRECONDITION",
            400,
        ),
        (
            A2aError::PushNotificationNotSupported,
            "PUSH_NOTIFICATION_NOT_SUPPORTED",
            -32003,
            "FAILED_PRECONDITION",
            400,
        ),
        (
            A2aError::UnsupportedOperation("x".into()),
            "UNSUPPORTED_OPERATION",
            -32004,
            "FAILED_PRECONDITION",
            400,
        ),
        (
            A2aError::ContentTypeNotSupported("x".into()),
            "CONTENT_TYPE_NOT_SUPPORTED",
            -32005,
            "INVALID_ARGUMENT",
            400,
        ),
        (
            A2aError::InvalidAgentResponse("x".into()),
            "INVALID_AGENT_RESPONSE",
            -32006,
            "INTERNAL",
            500,
        ),
        (
            A2aError::ExtendedAgentCardNotConfigured,
            "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
            -32007,
            "FAILED_PRECONDITION",
            400,
        ),
        (
            A2aError::ExtensionSupportRequired {
                uris: vec!["u".into()],
            },
            "EXTENSION_SUPPORT_REQUIRED",
            -32008,
            "FAILED_PRECONDITION",
            400,
        ),
        (
            A2aError::VersionNotSupported {
                requested: "0.3".into(),
                supported: vec!["1.0".into()],
            },
            "VERSION_NOT_SUPPORTED",
            -32009,
            "FAILED_PRECONDITION",
            400,
        ),
    ];
    for (err, reason, code, grpc, http) in rows {
        assert_eq!(err.reason(), Some(reason));
        assert_eq!(err.code(), code, "{reason}");
        assert_eq!(err.grpc_status(), grpc, "{reason}");
        assert_eq!(err.http_status(), http, "{reason}");
        // Round trip through the wire form keeps the kind.
        let body = err.to_jsonrpc_error();
        let details = body["data"].as_array().cloned().unwrap_or_default();
        let back = A2aError::from_wire(code, &err.to_string(), &details);
        assert_eq!(back.reason(), Some(reason));
        let rest = err.to_rest_body();
        assert_eq!(rest["error"]["details"][0]["domain"], ERROR_DOMAIN);
    }
}

#[test]
fn standard_jsonrpc_codes() {
    assert_eq!(A2aError::Parse("x".into()).code(), -32700);
    assert_eq!(A2aError::InvalidRequest("x".into()).code(), -32600);
    assert_eq!(
        A2aError::MethodNotFound {
            method: "x".into(),
            hint: vec![]
        }
        .code(),
        -32601
    );
    assert_eq!(A2aError::invalid_field("a", "b").code(), -32602);
    assert_eq!(A2aError::Internal("x".into()).code(), -32603);
}

#[test]
fn invalid_params_renders_bad_request_with_paths() {
    let e = A2aError::invalid_field("message.parts", "must contain at least one element");
    let d = e.details();
    assert_eq!(d[0]["@type"], BAD_REQUEST_TYPE);
    assert_eq!(d[0]["fieldViolations"][0]["field"], "message.parts");
    assert!(e.to_string().contains("message.parts"));
}

#[test]
fn conversions_keep_the_source() {
    fn agent_step() -> Result<(), A2aError> {
        std::fs::read("/nonexistent/a2a-runtime-test")?;
        Ok(())
    }
    let e = agent_step().unwrap_err();
    assert_eq!((e.code(), e.http_status(), e.reason()), (-32603, 500, None));
    let A2aError::InternalCause { source } = &e else {
        panic!("{e:?}")
    };
    assert!(source.get().downcast_ref::<std::io::Error>().is_some());
    assert_eq!(e.clone(), e, "a clone is the same error");
    assert_ne!(e, A2aError::internal(std::io::Error::other("x")));
    let json: Result<Value, _> = serde_json::from_str("{");
    let e = A2aError::from(json.unwrap_err());
    assert!(e.to_string().starts_with("Internal error: EOF"), "{e}");
    assert_eq!(e.to_jsonrpc_error()["code"], -32603);
}

#[cfg(feature = "anyhow")]
#[test]
fn anyhow_errors_convert_and_a2a_errors_survive_the_trip() {
    let e = A2aError::from(anyhow::anyhow!("low level").context("while charging"));
    assert_eq!(e.code(), -32603);
    assert!(e.to_string().contains("while charging"), "{e}");
    let back = A2aError::from(anyhow::Error::new(A2aError::TaskNotFound {
        task_id: "t".into(),
    }));
    assert_eq!(back.reason(), Some("TASK_NOT_FOUND"));
}

#[test]
fn an_internal_error_reaches_the_caller_as_a_correlation_id() {
    #[derive(Debug, thiserror::Error)]
    #[error("saving the report")]
    struct Saving(#[source] std::io::Error);
    let e = A2aError::internal(Saving(std::io::Error::other("disk full")));
    assert_eq!(super::cause_chain(&e), "saving the report: disk full");
    let hidden = e.clone().for_caller(false);
    let A2aError::InternalLogged { correlation_id, .. } = &hidden else {
        panic!("{hidden:?}")
    };
    assert!(!hidden.to_string().contains("disk full"), "{hidden}");
    assert!(!hidden.to_string().contains("saving"), "{hidden}");
    assert!(hidden.to_string().contains(correlation_id.as_str()));
    assert_eq!((hidden.code(), hidden.http_status()), (-32603, 500));
    assert_eq!(hidden.grpc_status(), "INTERNAL");
    let body = hidden.to_rest_body();
    assert_eq!(body["error"]["details"][0]["@type"], REQUEST_INFO_TYPE);
    assert_eq!(
        body["error"]["details"][0]["requestId"],
        correlation_id.as_str()
    );
    let shown = e.for_caller(true);
    assert!(
        shown.to_string().contains("saving the report: disk full"),
        "{shown}"
    );
    let plain = A2aError::Internal("no row".into()).for_caller(false);
    assert!(!plain.to_string().contains("no row"), "{plain}");
    // Errors the caller can act on keep their text.
    let actionable = [
        A2aError::TaskNotFound {
            task_id: "t".into(),
        },
        A2aError::invalid_field("message.parts", "is required"),
        A2aError::Unavailable("shutting down".into()),
    ];
    for e in actionable {
        assert_eq!(e.clone().for_caller(false), e);
    }
}

#[test]
fn an_exceeded_quota_is_429_resource_exhausted_and_round_trips() {
    let e = A2aError::QuotaExceeded {
        quota: "request rate of the principal".into(),
        retry_after_secs: 3,
    };
    assert_eq!(
        (e.code(), e.http_status(), e.grpc_status(), e.reason()),
        (-31429, 429, "RESOURCE_EXHAUSTED", Some("QUOTA_EXCEEDED"))
    );
    let body = e.to_jsonrpc_error();
    let details = body["data"].as_array().cloned().unwrap_or_default();
    assert_eq!(A2aError::from_wire(-31429, &e.to_string(), &details), e);
    assert_eq!(
        A2aError::from_wire(429, "slow down", &[]),
        A2aError::QuotaExceeded {
            quota: String::new(),
            retry_after_secs: 1
        }
    );
}

#[test]
fn version_error_metadata_is_strings() {
    let e = A2aError::VersionNotSupported {
        requested: "99.0".into(),
        supported: vec!["1.0".into()],
    };
    let d = e.details();
    assert_eq!(d[0]["metadata"]["supportedVersions"], "1.0");
    assert_eq!(d[0]["metadata"]["requestedVersion"], "99.0");
}

#[test]
fn a_quoted_value_is_clipped_to_64_characters() {
    assert_eq!(super::quoted("abc"), "\"abc\"");
    let long = "é".repeat(5_000);
    let q = super::quoted(&long);
    assert_eq!(q, format!("{:?}… (10000 bytes)", "é".repeat(64)));
    assert_eq!(
        super::quoted(&"x".repeat(64)),
        format!("{:?}", "x".repeat(64))
    );
}
