//! One method an extension serves, erased to JSON in and out ([`MethodEntry`]), and what its
//! handler gets ([`MethodContext`], [`TaskAccess`]). The typed side, [`ExtensionMethod`] and
//! [`MethodEntry::new`], is in `method`, over the [`Extension`] trait.
//!
//! [`ExtensionMethod`]: super::ExtensionMethod
//! [`Extension`]: super::Extension
// The server negotiates and serves what a client only declares: without the `server` feature
// the serving half is unused.
#![cfg_attr(not(feature = "server"), allow(dead_code))]

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;

use super::RequestContext;
use crate::error::A2aError;
use crate::types::{GetTaskRequest, ListTasksRequest, ListTasksResponse, Task};

/// What a method handler may ask of the agent's tasks, as the caller (same tenant and
/// principal, same visibility rules).
///
/// The core's [`RequestHandler`](crate::core::RequestHandler)s implement it: the server hands
/// methods the agent's handler through it.
///
/// ```
/// use a2a_runtime::extension::{MethodContext, TaskAccess};
/// use a2a_runtime::types::GetTaskRequest;
///
/// async fn first_history_text(ctx: &MethodContext, id: &str) -> Option<String> {
///     let tasks = ctx.handler()?;
///     let task = tasks
///         .get_task(ctx.request.clone(), GetTaskRequest { id: id.into(), ..Default::default() })
///         .await
///         .ok()?;
///     task.history.first().map(|m| m.text())
/// }
/// ```
#[async_trait::async_trait]
pub trait TaskAccess: Send + Sync {
    /// GetTask, as the caller of `ctx`.
    async fn get_task(&self, ctx: RequestContext, req: GetTaskRequest) -> Result<Task, A2aError>;

    /// ListTasks, as the caller of `ctx`.
    async fn list_tasks(
        &self,
        ctx: RequestContext,
        req: ListTasksRequest,
    ) -> Result<ListTasksResponse, A2aError>;
}

/// What a method handler gets: the request's context, and the agent's tasks to reach with the
/// caller's own scope and rules.
#[derive(Clone)]
pub struct MethodContext {
    /// The request: protocol version, tenant, principal, headers, activated extensions.
    pub request: RequestContext,
    pub(crate) handler: Option<Arc<dyn TaskAccess>>,
}

impl std::fmt::Debug for MethodContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MethodContext")
            .field("request", &self.request)
            .finish_non_exhaustive()
    }
}

impl MethodContext {
    /// ListTasks as the caller (same tenant and principal, same visibility rules).
    pub async fn list_tasks(&self, req: ListTasksRequest) -> Result<ListTasksResponse, A2aError> {
        match &self.handler {
            Some(h) => h.list_tasks(self.request.clone(), req).await,
            None => Err(A2aError::Internal(
                "no request handler is available to extension methods".into(),
            )),
        }
    }

    /// The agent's tasks, as the caller.
    pub fn handler(&self) -> Option<&Arc<dyn TaskAccess>> {
        self.handler.as_ref()
    }
}

pub(crate) type ErasedHandler =
    Arc<dyn Fn(MethodContext, Value) -> BoxFuture<'static, Result<Value, A2aError>> + Send + Sync>;

/// One method an extension serves, with its handler.
#[derive(Clone)]
pub struct MethodEntry {
    pub(crate) method: &'static str,
    pub(crate) rest_path: &'static str,
    pub(crate) extension: &'static str,
    pub(crate) handler: ErasedHandler,
}

impl std::fmt::Debug for MethodEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MethodEntry")
            .field("method", &self.method)
            .field("rest_path", &self.rest_path)
            .finish()
    }
}

impl MethodEntry {
    /// The JSON-RPC method name.
    pub fn method(&self) -> &'static str {
        self.method
    }

    /// The REST path.
    pub fn rest_path(&self) -> &'static str {
        self.rest_path
    }
}
