//! The protocol's operations as [`A2aClient`] methods. Each takes per-call options in its
//! `_with` form ([`CallOptions`]: headers, timeout, extensions for that call; send and stream
//! take [`SendOptions`], which hold them too); the short form uses the defaults.

use futures::Stream;

use super::error::ClientError;
use super::options::{CallOptions, SendOptions};
use super::response::Response;
use super::resume::LAST_EVENT_ID;
use super::stream::ClientStream;
use super::{A2aClient, MessageInput, SendResult};
use crate::error::A2aError;
use crate::extension::{Extension, Reply};
use crate::protocol::A2aRequest;
use crate::types::{
    AgentCard, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest, GetTaskPushNotificationConfigRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    ListTasksRequest, ListTasksResponse, PushConfigId, SendMessageConfiguration,
    SendMessageRequest, SubscribeToTaskRequest, Task, TaskId, TaskPushNotificationConfig,
};

impl A2aClient {
    fn send_request(&self, input: MessageInput, opts: &SendOptions) -> A2aRequest {
        let mut message = input.0;
        if let Some(t) = &opts.task_id {
            message.task_id = TaskId::from(t.as_str());
        }
        if let Some(c) = &opts.context_id {
            message.context_id = c.as_str().into();
        }
        let mut configuration = opts.configuration.clone();
        if let Some(n) = opts.history_length {
            configuration
                .get_or_insert_with(SendMessageConfiguration::default)
                .history_length = Some(n);
        }
        A2aRequest::SendMessage(SendMessageRequest {
            tenant: self.transport.interface.tenant.clone(),
            message,
            configuration,
            metadata: opts.metadata.clone(),
        })
    }

    /// SendMessage: the task (when it is terminal or interrupted, unless `returnImmediately`)
    /// or the agent's direct reply. An answer lost on the way (a dropped connection, a timeout,
    /// a proxy's 502/503/504) is asked for again with the same `messageId`, as
    /// [`Reconnect`](super::Reconnect) says.
    pub async fn send_message(
        &self,
        input: impl Into<MessageInput>,
        opts: SendOptions,
    ) -> Result<Response<SendResult>, ClientError> {
        let req = self.send_request(input.into(), &opts);
        self.unary(req, &opts.call(), |r: &mut SendResult| {
            Some(Reply::SendMessage(r))
        })
        .await
    }

    /// SendStreamingMessage: the events as they happen (the task first, then updates). A
    /// dropped connection is resumed once the first event named the task; one dropped before
    /// that sends the request again with the same `messageId` (see
    /// [`Reconnect`](super::Reconnect)).
    pub async fn stream_message(
        &self,
        input: impl Into<MessageInput>,
        opts: SendOptions,
    ) -> Result<Response<ClientStream>, ClientError> {
        let req = match self.send_request(input.into(), &opts) {
            A2aRequest::SendMessage(r) => A2aRequest::SendStreamingMessage(r),
            other => other,
        };
        self.streaming(req, opts.call()).await
    }

    /// GetTask.
    pub async fn get_task(
        &self,
        id: &str,
        history_length: Option<i32>,
    ) -> Result<Response<Task>, ClientError> {
        self.get_task_with(id, history_length, CallOptions::default())
            .await
    }

    /// GetTask with per-call options.
    pub async fn get_task_with(
        &self,
        id: &str,
        history_length: Option<i32>,
        opts: CallOptions,
    ) -> Result<Response<Task>, ClientError> {
        let req = A2aRequest::GetTask(GetTaskRequest {
            tenant: self.transport.interface.tenant.clone(),
            id: id.into(),
            history_length,
        });
        self.unary(req, &opts, |t: &mut Task| Some(Reply::Task(t)))
            .await
    }

    /// ListTasks (one page).
    pub async fn list_tasks(
        &self,
        req: ListTasksRequest,
    ) -> Result<Response<ListTasksResponse>, ClientError> {
        self.list_tasks_with(req, CallOptions::default()).await
    }

    /// ListTasks (one page) with per-call options.
    pub async fn list_tasks_with(
        &self,
        mut req: ListTasksRequest,
        opts: CallOptions,
    ) -> Result<Response<ListTasksResponse>, ClientError> {
        req.tenant.clone_from(&self.transport.interface.tenant);
        self.unary(
            A2aRequest::ListTasks(req),
            &opts,
            |r: &mut ListTasksResponse| Some(Reply::ListTasks(r)),
        )
        .await
    }

    /// Every task matching `req`, walking `nextPageToken` page by page.
    pub fn list_all_tasks(
        &self,
        req: ListTasksRequest,
    ) -> impl Stream<Item = Result<Task, ClientError>> + Send + '_ {
        struct Walk {
            next: Option<ListTasksRequest>,
            buffered: std::collections::VecDeque<Task>,
        }
        let start = Walk {
            next: Some(req),
            buffered: Default::default(),
        };
        futures::stream::unfold(start, move |mut walk| async move {
            loop {
                if let Some(task) = walk.buffered.pop_front() {
                    return Some((Ok(task), walk));
                }
                let req = walk.next.take()?;
                match self.list_tasks(req.clone()).await {
                    Err(e) => return Some((Err(e), walk)),
                    Ok(page) => {
                        let page = page.into_inner();
                        if !page.next_page_token.is_empty() {
                            if page.tasks.is_empty() {
                                let e = ClientError::InvalidResponse(
                                    "an empty page with a next page token".into(),
                                );
                                return Some((Err(e), walk));
                            }
                            walk.next = Some(ListTasksRequest {
                                page_token: page.next_page_token,
                                ..req
                            });
                        }
                        walk.buffered.extend(page.tasks);
                    }
                }
            }
        })
    }

    /// CancelTask.
    pub async fn cancel_task(&self, id: &str) -> Result<Response<Task>, ClientError> {
        self.cancel_task_with(id, CallOptions::default()).await
    }

    /// CancelTask with per-call options.
    pub async fn cancel_task_with(
        &self,
        id: &str,
        opts: CallOptions,
    ) -> Result<Response<Task>, ClientError> {
        let req = A2aRequest::CancelTask(CancelTaskRequest {
            tenant: self.transport.interface.tenant.clone(),
            id: id.into(),
            metadata: Default::default(),
        });
        self.unary(req, &opts, |t: &mut Task| Some(Reply::Task(t)))
            .await
    }

    /// SubscribeToTask: the task as it stands, then its live events until it is terminal. A
    /// missing task is TaskNotFound and a finished one UnsupportedOperation.
    pub async fn resubscribe(&self, id: &str) -> Result<Response<ClientStream>, ClientError> {
        self.resubscribe_with(id, CallOptions::default()).await
    }

    /// SubscribeToTask with per-call options (a `Last-Event-ID` header among them resumes
    /// after that event, as [`subscribe_from`](Self::subscribe_from) does).
    pub async fn resubscribe_with(
        &self,
        id: &str,
        opts: CallOptions,
    ) -> Result<Response<ClientStream>, ClientError> {
        let req = A2aRequest::SubscribeToTask(SubscribeToTaskRequest {
            tenant: self.transport.interface.tenant.clone(),
            id: id.into(),
        });
        self.streaming(req, opts).await
    }

    /// SubscribeToTask resuming after the event `event_id` (a
    /// [`ClientStream::last_event_id`] of an earlier stream of the task): every event after
    /// it, in order, then the live ones — no snapshot first. Needs a server that keeps its
    /// tasks' events (ours do, see [`RESUME_EXTENSION`](crate::core::RESUME_EXTENSION)); an id
    /// it no longer holds is the agent's invalid-params error.
    ///
    /// ```no_run
    /// use futures::StreamExt as _;
    ///
    /// # async fn run(client: a2a_runtime::client::A2aClient) -> Result<(), a2a_runtime::client::ClientError> {
    /// let mut events = client.subscribe_from("t-1", "7").await?.into_inner();
    /// while let Some(event) = events.next().await {
    ///     println!("{:?} (event {:?})", event?, events.last_event_id());
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn subscribe_from(
        &self,
        task_id: &str,
        event_id: &str,
    ) -> Result<Response<ClientStream>, ClientError> {
        let opts = CallOptions::default().header(LAST_EVENT_ID, event_id);
        self.resubscribe_with(task_id, opts).await
    }

    /// CreateTaskPushNotificationConfig (the server assigns the id when `config.id` is empty).
    pub async fn set_push_config(
        &self,
        config: TaskPushNotificationConfig,
    ) -> Result<Response<TaskPushNotificationConfig>, ClientError> {
        self.set_push_config_with(config, CallOptions::default())
            .await
    }

    /// CreateTaskPushNotificationConfig with per-call options.
    pub async fn set_push_config_with(
        &self,
        mut config: TaskPushNotificationConfig,
        opts: CallOptions,
    ) -> Result<Response<TaskPushNotificationConfig>, ClientError> {
        config.tenant.clone_from(&self.transport.interface.tenant);
        let req = A2aRequest::CreateTaskPushNotificationConfig(config);
        self.unary(req, &opts, |c: &mut TaskPushNotificationConfig| {
            Some(Reply::PushConfig(c))
        })
        .await
    }

    /// GetTaskPushNotificationConfig.
    pub async fn get_push_config(
        &self,
        task_id: &str,
        id: &str,
    ) -> Result<Response<TaskPushNotificationConfig>, ClientError> {
        self.get_push_config_with(task_id, id, CallOptions::default())
            .await
    }

    /// GetTaskPushNotificationConfig with per-call options.
    pub async fn get_push_config_with(
        &self,
        task_id: &str,
        id: &str,
        opts: CallOptions,
    ) -> Result<Response<TaskPushNotificationConfig>, ClientError> {
        let req = A2aRequest::GetTaskPushNotificationConfig(GetTaskPushNotificationConfigRequest {
            tenant: self.transport.interface.tenant.clone(),
            task_id: task_id.into(),
            id: PushConfigId::from(id),
        });
        self.unary(req, &opts, |c: &mut TaskPushNotificationConfig| {
            Some(Reply::PushConfig(c))
        })
        .await
    }

    /// ListTaskPushNotificationConfigs.
    pub async fn list_push_configs(
        &self,
        task_id: &str,
    ) -> Result<Response<ListTaskPushNotificationConfigsResponse>, ClientError> {
        self.list_push_configs_with(task_id, CallOptions::default())
            .await
    }

    /// ListTaskPushNotificationConfigs with per-call options.
    pub async fn list_push_configs_with(
        &self,
        task_id: &str,
        opts: CallOptions,
    ) -> Result<Response<ListTaskPushNotificationConfigsResponse>, ClientError> {
        let req =
            A2aRequest::ListTaskPushNotificationConfigs(ListTaskPushNotificationConfigsRequest {
                tenant: self.transport.interface.tenant.clone(),
                task_id: task_id.into(),
                ..Default::default()
            });
        self.unary(
            req,
            &opts,
            |c: &mut ListTaskPushNotificationConfigsResponse| Some(Reply::PushConfigs(c)),
        )
        .await
    }

    /// DeleteTaskPushNotificationConfig (idempotent).
    pub async fn delete_push_config(
        &self,
        task_id: &str,
        id: &str,
    ) -> Result<Response<()>, ClientError> {
        self.delete_push_config_with(task_id, id, CallOptions::default())
            .await
    }

    /// DeleteTaskPushNotificationConfig with per-call options.
    pub async fn delete_push_config_with(
        &self,
        task_id: &str,
        id: &str,
        opts: CallOptions,
    ) -> Result<Response<()>, ClientError> {
        let req =
            A2aRequest::DeleteTaskPushNotificationConfig(DeleteTaskPushNotificationConfigRequest {
                tenant: self.transport.interface.tenant.clone(),
                task_id: task_id.into(),
                id: PushConfigId::from(id),
            });
        let r: Response<crate::types::Empty> = self
            .unary(req, &opts, |e: &mut crate::types::Empty| {
                Some(Reply::Empty(e))
            })
            .await?;
        Ok(r.map(|_| ()))
    }

    /// GetExtendedAgentCard.
    pub async fn extended_card(&self) -> Result<Response<AgentCard>, ClientError> {
        self.extended_card_with(CallOptions::default()).await
    }

    /// GetExtendedAgentCard with per-call options.
    pub async fn extended_card_with(
        &self,
        opts: CallOptions,
    ) -> Result<Response<AgentCard>, ClientError> {
        let req = A2aRequest::GetExtendedAgentCard(GetExtendedAgentCardRequest {
            tenant: self.transport.interface.tenant.clone(),
        });
        self.unary(req, &opts, |c: &mut AgentCard| Some(Reply::AgentCard(c)))
            .await
    }

    /// Calls a method added by an extension, typed; its extension is activated for the call.
    pub async fn call<M: crate::extension::ExtensionMethod>(
        &self,
        params: M::Params,
    ) -> Result<Response<M::Result>, ClientError> {
        let value = serde_json::to_value(&params).map_err(|e| {
            ClientError::Local(A2aError::Internal(format!(
                "could not encode the params of {}: {e}",
                M::METHOD
            )))
        })?;
        self.ensure_checked()?;
        let uri = <M::Extension as Extension>::URI;
        let (result, meta) = self
            .transport
            .call_method(M::METHOD, M::REST_PATH, uri, value, &CallOptions::default())
            .await?;
        let typed = crate::json::from_value(result).map_err(|e| {
            ClientError::InvalidResponse(format!("the result of {} does not fit: {e}", M::METHOD))
        })?;
        Ok(Response::new(typed, meta))
    }

    /// Calls a method added by an extension by name, untyped: `method` on JSON-RPC, a POST on
    /// `rest_path` (below the interface URL) on HTTP+JSON; `extension` is activated for the
    /// call.
    pub async fn call_raw(
        &self,
        method: &'static str,
        rest_path: &'static str,
        extension: &'static str,
        params: serde_json::Value,
        opts: CallOptions,
    ) -> Result<Response<serde_json::Value>, ClientError> {
        self.ensure_checked()?;
        let (result, meta) = self
            .transport
            .call_method(method, rest_path, extension, params, &opts)
            .await?;
        Ok(Response::new(result, meta))
    }

    /// Calls any operation with per-call options (headers, timeout, extensions).
    pub async fn call_with<T: serde::de::DeserializeOwned + 'static>(
        &self,
        req: A2aRequest,
        opts: CallOptions,
    ) -> Result<Response<T>, ClientError> {
        if req.operation().is_streaming() {
            return Err(ClientError::Local(A2aError::InvalidRequest(format!(
                "{} is a streaming operation",
                req.operation()
            ))));
        }
        self.unary(req, &opts, |_: &mut T| None).await
    }
}
