//! Method extensions: extensions that add RPC methods.
//!
//! A method is declared as a type implementing [`ExtensionMethod`] (its name, its REST path,
//! typed params and result) and served by the extension that returns it from
//! [`ExtensionHooks::methods`](super::ExtensionHooks::methods). The server answers it on
//! JSON-RPC (the method name) and on HTTP+JSON (`POST` at its REST path, which lives under
//! `/extensions/`), with the same request context, authentication and limits as the core
//! methods. A method exists for a request only when its extension is activated: otherwise
//! JSON-RPC answers MethodNotFound (-32601) and REST 404, with an ErrorInfo naming the
//! extension to activate. A method may not shadow a core method (startup error). Clients call
//! it typed with `client.call::<M>(params)`.
//!
//! ```
//! use a2a_runtime::a2a_extension;
//! use a2a_runtime::extension::{ExtensionHooks, ExtensionMethod, MethodEntry};
//! use a2a_runtime::types::{ListTasksRequest, Task};
//! use serde::{Deserialize, Serialize};
//!
//! /// Lets clients search their task history.
//! #[a2a_extension(uri = "https://example.com/ext/task-history/v1")]
//! #[derive(Default, Serialize, Deserialize)]
//! struct TaskHistory {}
//!
//! /// `tasks/search`: tasks whose history mentions a text.
//! struct SearchTasks;
//!
//! #[derive(Serialize, Deserialize)]
//! struct SearchParams { query: String }
//!
//! #[derive(Serialize, Deserialize)]
//! struct SearchResult { tasks: Vec<Task> }
//!
//! impl ExtensionMethod for SearchTasks {
//!     type Extension = TaskHistory;
//!     const METHOD: &'static str = "tasks/search";
//!     const REST_PATH: &'static str = "/extensions/task-history/v1/tasks:search";
//!     type Params = SearchParams;
//!     type Result = SearchResult;
//! }
//!
//! impl ExtensionHooks for TaskHistory {
//!     type Activation = ();
//!     fn methods(&self) -> Vec<MethodEntry> {
//!         vec![MethodEntry::new::<SearchTasks, _, _>(|ctx, params: SearchParams| async move {
//!             let page = ctx.list_tasks(ListTasksRequest::default()).await?;
//!             let tasks = page.tasks.into_iter()
//!                 .filter(|t| t.history.iter().any(|m| m.text().contains(&params.query)))
//!                 .collect();
//!             Ok(SearchResult { tasks })
//!         })]
//!     }
//! }
//! ```

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::RequestContext;
use super::traits::Extension;
use crate::error::A2aError;
use crate::types::{GetTaskRequest, ListTasksRequest, ListTasksResponse, Task};

/// A method added by an extension.
pub trait ExtensionMethod: Send + Sync + 'static {
    /// The extension that serves it (and must be activated to call it).
    type Extension: Extension;
    /// The JSON-RPC method name, e.g. `tasks/search`.
    const METHOD: &'static str;
    /// The HTTP+JSON path (POST), below the interface URL; must start with `/extensions/`.
    const REST_PATH: &'static str;
    /// The params.
    type Params: Serialize + DeserializeOwned + Send + 'static;
    /// The result.
    type Result: Serialize + DeserializeOwned + Send + 'static;
}

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
    /// Serves method `M` with `handler`.
    pub fn new<M, F, Fut>(handler: F) -> Self
    where
        M: ExtensionMethod,
        F: Fn(MethodContext, M::Params) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<M::Result, A2aError>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        let erased: ErasedHandler = Arc::new(move |ctx, params| {
            let handler = handler.clone();
            Box::pin(async move {
                let params: M::Params = crate::json::from_value(params)?;
                let result = handler(ctx, params).await?;
                serde_json::to_value(result).map_err(|e| {
                    A2aError::Internal(format!("could not encode the result of {}: {e}", M::METHOD))
                })
            })
        });
        Self {
            method: M::METHOD,
            rest_path: M::REST_PATH,
            extension: <M::Extension as Extension>::URI,
            handler: erased,
        }
    }

    /// The JSON-RPC method name.
    pub fn method(&self) -> &'static str {
        self.method
    }

    /// The REST path.
    pub fn rest_path(&self) -> &'static str {
        self.rest_path
    }
}
