//! [`A2aService`]: the protocol pipeline every binding runs a request through — version check,
//! validation, limits, tenant, then the [`RequestHandler`].

use std::sync::Arc;

use super::context::RequestContext;
use super::handler::RequestHandler;
use super::limits::Limits;
use super::operation::{A2aRequest, A2aResponse};
use crate::error::A2aError;
use crate::types::Validate;

/// The protocol versions this runtime serves.
pub const SUPPORTED_VERSIONS: &[&str] = &[crate::PROTOCOL_VERSION];

/// The transport-independent entry point of the server.
///
/// A binding builds a [`RequestContext`] from the transport, calls [`A2aService::begin`] (checks
/// that need only headers, before the body is read), decodes the payload into an [`A2aRequest`],
/// and calls [`A2aService::call`].
#[derive(Clone)]
pub struct A2aService {
    handler: Arc<dyn RequestHandler>,
    limits: Limits,
}

impl std::fmt::Debug for A2aService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aService")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl A2aService {
    /// A service dispatching to `handler`.
    pub fn new(handler: Arc<dyn RequestHandler>, limits: Limits) -> Self {
        Self { handler, limits }
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Checks that need no payload: the protocol version.
    ///
    /// A missing or empty `A2A-Version` means 0.3, which this runtime does not serve; only
    /// `Major.Minor` counts (a patch number is ignored).
    pub fn begin(&self, ctx: &RequestContext) -> Result<(), A2aError> {
        check_version(ctx.protocol_version.as_deref())
    }

    /// Validates `req`, resolves the tenant, applies the limits, and runs the operation.
    pub async fn call(
        &self,
        mut ctx: RequestContext,
        mut req: A2aRequest,
    ) -> Result<A2aResponse, A2aError> {
        req.validate()?;
        if ctx.tenant.is_empty() {
            ctx.tenant = req.tenant().to_owned();
        } else {
            req.set_tenant(&ctx.tenant);
        }
        self.check_limits(&req)?;
        dispatch(self.handler.as_ref(), ctx, req).await
    }

    fn check_limits(&self, req: &A2aRequest) -> Result<(), A2aError> {
        if let A2aRequest::SendMessage(r) | A2aRequest::SendStreamingMessage(r) = req
            && r.message.parts.len() > self.limits.max_parts_per_message
        {
            return Err(A2aError::invalid_field(
                "message.parts",
                format!(
                    "has {} parts; this server accepts at most {}",
                    r.message.parts.len(),
                    self.limits.max_parts_per_message
                ),
            ));
        }
        Ok(())
    }
}

/// Checks an `A2A-Version` value against [`SUPPORTED_VERSIONS`].
pub fn check_version(header: Option<&str>) -> Result<(), A2aError> {
    let requested = header
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .unwrap_or("0.3");
    let major_minor = major_minor(requested);
    if SUPPORTED_VERSIONS
        .iter()
        .any(|v| Some(*v) == major_minor.as_deref())
    {
        Ok(())
    } else {
        Err(A2aError::VersionNotSupported {
            requested: requested.to_owned(),
            supported: SUPPORTED_VERSIONS.iter().map(|s| (*s).to_owned()).collect(),
        })
    }
}

/// `1.0` and `1.0.3` → `1.0`; anything else → `None`.
fn major_minor(v: &str) -> Option<String> {
    let mut parts = v.split('.');
    let major = parts.next()?;
    let minor = parts.next()?;
    let patch_ok = parts
        .next()
        .is_none_or(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(major) && digits(minor) && patch_ok && parts.next().is_none())
        .then(|| format!("{major}.{minor}"))
}

/// Runs one request on a handler.
pub async fn dispatch(
    handler: &dyn RequestHandler,
    ctx: RequestContext,
    req: A2aRequest,
) -> Result<A2aResponse, A2aError> {
    Ok(match req {
        A2aRequest::SendMessage(r) => A2aResponse::SendMessage(handler.send_message(ctx, r).await?),
        A2aRequest::SendStreamingMessage(r) => {
            A2aResponse::Stream(handler.send_streaming_message(ctx, r).await?)
        }
        A2aRequest::GetTask(r) => A2aResponse::Task(handler.get_task(ctx, r).await?),
        A2aRequest::ListTasks(r) => A2aResponse::ListTasks(handler.list_tasks(ctx, r).await?),
        A2aRequest::CancelTask(r) => A2aResponse::Task(handler.cancel_task(ctx, r).await?),
        A2aRequest::SubscribeToTask(r) => {
            A2aResponse::Stream(handler.subscribe_to_task(ctx, r).await?)
        }
        A2aRequest::CreateTaskPushNotificationConfig(r) => {
            A2aResponse::PushConfig(handler.create_task_push_notification_config(ctx, r).await?)
        }
        A2aRequest::GetTaskPushNotificationConfig(r) => {
            A2aResponse::PushConfig(handler.get_task_push_notification_config(ctx, r).await?)
        }
        A2aRequest::ListTaskPushNotificationConfigs(r) => {
            A2aResponse::PushConfigs(handler.list_task_push_notification_configs(ctx, r).await?)
        }
        A2aRequest::DeleteTaskPushNotificationConfig(r) => {
            A2aResponse::Empty(handler.delete_task_push_notification_config(ctx, r).await?)
        }
        A2aRequest::GetExtendedAgentCard(r) => {
            A2aResponse::AgentCard(Box::new(handler.get_extended_agent_card(ctx, r).await?))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_negotiation() {
        assert!(check_version(Some("1.0")).is_ok());
        assert!(check_version(Some(" 1.0 ")).is_ok());
        assert!(check_version(Some("1.0.7")).is_ok());
        for bad in [
            None,
            Some(""),
            Some("0.3"),
            Some("99.0"),
            Some("1"),
            Some("1.0.x"),
            Some("v1.0"),
        ] {
            let err = check_version(bad).err();
            assert!(
                matches!(err, Some(A2aError::VersionNotSupported { .. })),
                "{bad:?}"
            );
        }
        match check_version(None) {
            Err(A2aError::VersionNotSupported {
                requested,
                supported,
            }) => {
                assert_eq!(requested, "0.3");
                assert_eq!(supported, vec!["1.0".to_owned()]);
            }
            other => panic!("{other:?}"),
        }
    }
}
