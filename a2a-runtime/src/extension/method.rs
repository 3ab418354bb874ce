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

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::method_entry::ErasedHandler;
pub use super::method_entry::{MethodContext, MethodEntry, TaskAccess};
use super::traits::Extension;
use crate::error::A2aError;

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
}
