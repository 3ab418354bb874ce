//! [`RequestHandler`] for [`DefaultRequestHandler`]: each operation over the pieces in the
//! sibling files.

use super::super::events::{EventStream, Listen, Listener};
use super::default::DefaultRequestHandler;
use super::default::trim_history;
use super::repeat::Claim;
use super::request_handler::RequestHandler;
use super::send::Started;
use super::stream::{OnFinished, bus_stream, task_stream};
use crate::error::A2aError;
use crate::extension::RequestContext;
use crate::store::TaskQuery;
use crate::types::{
    AgentCard, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest, Empty,
    GetExtendedAgentCardRequest, GetTaskPushNotificationConfigRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    ListTasksRequest, ListTasksResponse, PushConfigId, SendMessageRequest, SendMessageResponse,
    SubscribeToTaskRequest, Task, TaskPushNotificationConfig, TaskState,
};

/// One page of a task's configs (oldest first): `page_token` is the id of the last config of
/// the previous page; `page_size` 0 means all.
fn page_of_configs(
    mut configs: Vec<TaskPushNotificationConfig>,
    page_size: i32,
    page_token: &str,
) -> Result<ListTaskPushNotificationConfigsResponse, A2aError> {
    if !page_token.is_empty() {
        let Some(at) = configs.iter().position(|c| c.id.as_str() == page_token) else {
            return Err(A2aError::invalid_field(
                "pageToken",
                "is not a token this server issued (or its config was deleted)",
            ));
        };
        configs.drain(..=at);
    }
    let size = usize::try_from(page_size).unwrap_or(0);
    let mut next_page_token = String::new();
    if size > 0 && configs.len() > size {
        configs.truncate(size);
        next_page_token = configs.last().map(|c| c.id.to_string()).unwrap_or_default();
    }
    Ok(ListTaskPushNotificationConfigsResponse {
        configs,
        next_page_token,
    })
}

#[async_trait::async_trait]
impl RequestHandler for DefaultRequestHandler {
    async fn send_message(
        &self,
        ctx: RequestContext,
        req: SendMessageRequest,
    ) -> Result<SendMessageResponse, A2aError> {
        self.send(ctx, req).await.map(|(response, _)| response)
    }

    async fn send_streaming_message(
        &self,
        ctx: RequestContext,
        req: SendMessageRequest,
    ) -> Result<EventStream, A2aError> {
        if !self.streaming() {
            return Err(A2aError::UnsupportedOperation(
                "this agent does not support streaming".into(),
            ));
        }
        let scope = ctx.scope();
        let reserved = match self.claim(&scope, &req.message).await? {
            Claim::First(reserved) => reserved,
            Claim::Repeat(task_id) => return self.stream_repeat(&ctx, &task_id).await,
        };
        let message_id = req.message.message_id.clone();
        let started = self.start(ctx, req, Listen::Stream, reserved.clone()).await;
        if started.is_err()
            && let Some(task_id) = &reserved
        {
            self.release_claim(&scope, &message_id, task_id).await;
        }
        let Started {
            rt,
            first,
            listener,
            execution,
            run,
        } = started?;
        tokio::spawn(run);
        let Listener::Stream(sub) = listener else {
            self.registry.release(&rt);
            return Err(A2aError::Internal("no subscription for the stream".into()));
        };
        Ok(bus_stream(
            self.registry.clone(),
            self.store.clone(),
            sub,
            first.map(|f| *f),
            Some(execution),
            None,
        ))
    }

    async fn get_task(&self, ctx: RequestContext, req: GetTaskRequest) -> Result<Task, A2aError> {
        let mut task = self.task_or_not_found(&ctx, &req.id).await?;
        trim_history(&mut task, req.history_length);
        Ok(task)
    }

    async fn list_tasks(
        &self,
        ctx: RequestContext,
        req: ListTasksRequest,
    ) -> Result<ListTasksResponse, A2aError> {
        let page_size = req.page_size.unwrap_or(50);
        let query = TaskQuery {
            context_id: (!req.context_id.is_empty()).then(|| req.context_id.clone()),
            state: (req.status != TaskState::Unspecified).then_some(req.status),
            status_timestamp_after: req.status_timestamp_after,
            page_size: usize::try_from(page_size).unwrap_or(50),
            page_token: (!req.page_token.is_empty()).then(|| req.page_token.clone()),
        };
        let page = self.store.list(&ctx.scope(), &query).await?;
        let include_artifacts = req.include_artifacts == Some(true);
        let tasks = page
            .tasks
            .into_iter()
            .map(|mut t| {
                trim_history(&mut t, req.history_length);
                if !include_artifacts {
                    t.artifacts.clear();
                }
                t
            })
            .collect();
        Ok(ListTasksResponse {
            tasks,
            next_page_token: page.next_page_token,
            page_size,
            total_size: i32::try_from(page.total_size).unwrap_or(i32::MAX),
        })
    }

    async fn cancel_task(
        &self,
        ctx: RequestContext,
        req: CancelTaskRequest,
    ) -> Result<Task, A2aError> {
        let scope = ctx.scope();
        let Some(rt) = self
            .registry
            .load(self.store.as_ref(), &scope, &req.id)
            .await?
        else {
            return Err(A2aError::TaskNotFound {
                task_id: req.id.to_string(),
            });
        };
        let result = self.cancel_on(&rt, ctx, req).await;
        self.registry.release(&rt);
        result
    }

    async fn subscribe_to_task(
        &self,
        ctx: RequestContext,
        req: SubscribeToTaskRequest,
    ) -> Result<EventStream, A2aError> {
        if !self.streaming() {
            return Err(A2aError::UnsupportedOperation(
                "this agent does not support streaming".into(),
            ));
        }
        let Some(rt) = self
            .registry
            .load(self.store.as_ref(), &ctx.scope(), &req.id)
            .await?
        else {
            return Err(A2aError::TaskNotFound {
                task_id: req.id.to_string(),
            });
        };
        let resume_after = ctx.resume_after;
        let Some(subscribed) = rt.snapshot_and_subscribe().await else {
            self.registry.release(&rt);
            return Err(A2aError::TaskNotFound {
                task_id: req.id.to_string(),
            });
        };
        task_stream(
            self.registry.clone(),
            self.store.clone(),
            subscribed,
            resume_after,
            OnFinished::Refuse,
        )
    }

    async fn create_task_push_notification_config(
        &self,
        ctx: RequestContext,
        mut req: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, A2aError> {
        let push = self.push_supported()?;
        if req.task_id.is_empty() {
            return Err(A2aError::invalid_field("taskId", "is required"));
        }
        push.check(&req, "").await?;
        self.task_or_not_found(&ctx, &req.task_id).await?;
        let scope = ctx.scope();
        let existing = self.push_store.list(&scope, &req.task_id).await?;
        if req.id.is_empty() {
            req.id = PushConfigId::random();
        }
        let replaces = existing.iter().any(|c| c.id == req.id);
        if !replaces && existing.len() >= self.limits.max_push_configs_per_task {
            return Err(A2aError::invalid_field(
                "",
                format!(
                    "task {} already has {} push notification configs, the most this server keeps; delete one first",
                    req.task_id, self.limits.max_push_configs_per_task
                ),
            ));
        }
        req.tenant.clone_from(&ctx.tenant);
        self.push_store.put(&scope, &req).await?;
        Ok(req)
    }

    async fn get_task_push_notification_config(
        &self,
        ctx: RequestContext,
        req: GetTaskPushNotificationConfigRequest,
    ) -> Result<TaskPushNotificationConfig, A2aError> {
        self.push_supported()?;
        self.task_or_not_found(&ctx, &req.task_id).await?;
        self.push_store
            .get(&ctx.scope(), &req.task_id, &req.id)
            .await?
            .ok_or_else(|| A2aError::TaskNotFound {
                task_id: req.task_id.to_string(),
            })
    }

    async fn list_task_push_notification_configs(
        &self,
        ctx: RequestContext,
        req: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, A2aError> {
        self.push_supported()?;
        self.task_or_not_found(&ctx, &req.task_id).await?;
        let configs = self.push_store.list(&ctx.scope(), &req.task_id).await?;
        page_of_configs(configs, req.page_size, &req.page_token)
    }

    async fn delete_task_push_notification_config(
        &self,
        ctx: RequestContext,
        req: DeleteTaskPushNotificationConfigRequest,
    ) -> Result<Empty, A2aError> {
        self.push_supported()?;
        self.task_or_not_found(&ctx, &req.task_id).await?;
        self.push_store
            .delete(&ctx.scope(), &req.task_id, &req.id)
            .await?;
        Ok(Empty {})
    }

    async fn shutdown(&self, cancel_running: bool) {
        if !cancel_running {
            return;
        }
        let running = self.registry.live_runtimes();
        let cancels = running.iter().map(|rt| async move {
            if rt.state.lock().await.running.is_empty() {
                return;
            }
            let ctx = RequestContext {
                tenant: rt.scope.tenant.clone(),
                ..RequestContext::v1()
            };
            let req = CancelTaskRequest {
                tenant: rt.scope.tenant.clone(),
                id: rt.id.clone(),
                ..CancelTaskRequest::default()
            };
            if let Err(e) = self.cancel_on(rt, ctx, req).await {
                tracing::debug!(task_id = %rt.id, error = %e, "not canceled at shutdown");
            }
        });
        futures::future::join_all(cancels).await;
    }

    async fn get_extended_agent_card(
        &self,
        _ctx: RequestContext,
        _req: GetExtendedAgentCardRequest,
    ) -> Result<AgentCard, A2aError> {
        if self.card.capabilities.extended_agent_card != Some(true) {
            return Err(A2aError::UnsupportedOperation(
                "this agent does not declare an extended agent card".into(),
            ));
        }
        self.extended_card
            .as_deref()
            .cloned()
            .ok_or(A2aError::ExtendedAgentCardNotConfigured)
    }
}
