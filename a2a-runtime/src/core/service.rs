//! [`A2aService`]: the core below the request pipeline — version check, validation, limits,
//! extension negotiation and hooks, then the [`RequestHandler`].

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use super::events::EventStream;
use super::handler::{RequestHandler, ServedHandler};
use super::limits::Limits;
use super::response::A2aResponse;
use crate::error::A2aError;
use crate::extension::RequestContext;
use crate::extension::hygiene::Hygiene;
use crate::extension::{Activated, ExtensionSet, MetadataHygiene, Negotiated, Reply, TaskAccess};
use crate::protocol::A2aRequest;
use crate::types::{
    AgentCard, Empty, GetTaskRequest, ListTaskPushNotificationConfigsResponse, ListTasksRequest,
    ListTasksResponse, SendMessageResponse, Task, TaskPushNotificationConfig, Validate,
};
use futures::StreamExt as _;
use futures::future::BoxFuture;

/// The protocol versions this runtime serves.
pub const SUPPORTED_VERSIONS: &[&str] = &[crate::PROTOCOL_VERSION];

/// The core of the server below its request pipeline: extension negotiation and hooks around
/// the agent's [`RequestHandler`].
///
/// It authenticates nobody: bindings serve requests through the
/// [`Pipeline`](crate::service::Pipeline), which calls [`A2aService::begin`] and
/// [`A2aService::call`] once the caller is known.
#[derive(Clone)]
pub struct A2aService {
    handler: ServedHandler,
    /// The same handler, as extension methods reach it.
    tasks: Arc<dyn TaskAccess>,
    limits: Limits,
    extensions: ExtensionSet,
    /// What extension metadata answers may carry (`None`: all of it).
    hygiene: Option<Arc<Hygiene>>,
}

/// The result of [`A2aService::call`]: the response and the extensions activated for it (to echo
/// in the `A2A-Extensions` response header).
#[derive(Debug)]
pub struct OperationResponse {
    /// The operation's result (already through every `handle_response` and `observe_response`
    /// hook; streamed events pass through them as they are produced).
    response: A2aResponse,
    /// The JSON of `response`, when written already.
    json: Option<bytes::Bytes>,
    /// The activated extensions, in declaration order.
    pub activated: Activated,
}

impl OperationResponse {
    /// The operation's result (already through every `handle_response` and `observe_response`
    /// hook; streamed events pass through them as they are produced).
    pub fn response(&self) -> &A2aResponse {
        &self.response
    }

    /// The result and the activated extensions (for a binding that encodes results itself).
    pub fn into_parts(self) -> (A2aResponse, Activated) {
        (self.response, self.activated)
    }

    /// The same response, each error of a streamed result passed through `map` (a unary
    /// result as it is).
    pub(crate) fn map_stream_errors(
        self,
        map: impl Fn(A2aError) -> A2aError + Send + 'static,
    ) -> Self {
        match self.response {
            A2aResponse::Stream(events) => {
                let events = futures::StreamExt::map(events, move |item| item.map_err(&map));
                Self {
                    response: A2aResponse::Stream(Box::pin(events)),
                    ..self
                }
            }
            response => Self { response, ..self },
        }
    }

    /// A streamed result's events and the activated extensions; a unary result is given back
    /// (as `Arc::try_unwrap` gives back what it cannot unwrap).
    // The "error" is the unary result itself, moved once on its way to being encoded.
    #[allow(clippy::result_large_err)]
    pub fn into_stream(self) -> Result<(EventStream, Activated), Self> {
        match self.response {
            A2aResponse::Stream(events) => Ok((events, self.activated)),
            response => Err(Self { response, ..self }),
        }
    }

    /// A streamed result of `events` (the pipeline's quotas watch a stream through it).
    pub(crate) fn of_stream(events: EventStream, activated: Activated) -> Self {
        Self {
            response: A2aResponse::Stream(events),
            json: None,
            activated,
        }
    }

    /// Appends the JSON of a unary result to `out` (`None` for streams, and `out` is
    /// unchanged), as [`A2aResponse::write_json`] does.
    // Copied when the handler wrote it already.
    pub fn write_json(&self, out: &mut Vec<u8>) -> Option<Result<(), serde_json::Error>> {
        match &self.json {
            Some(json) => {
                out.extend_from_slice(json);
                Some(Ok(()))
            }
            None => self.response.write_json(out),
        }
    }

    /// The JSON of a unary result (`None` for streams), as [`A2aResponse::to_json`] gives it.
    // Shared, not copied, when the handler wrote it already.
    #[cfg(any(feature = "server", test))]
    pub(crate) fn to_json(&self) -> Option<Result<bytes::Bytes, serde_json::Error>> {
        match &self.json {
            Some(json) => Some(Ok(json.clone())),
            None => self
                .response
                .to_json()
                .map(|json| json.map(bytes::Bytes::from)),
        }
    }
}

impl std::fmt::Debug for A2aService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aService")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// The agent's handler as extension methods reach it: the task operations, as the caller.
struct HandlerTasks(Arc<dyn RequestHandler>);

#[async_trait::async_trait]
impl TaskAccess for HandlerTasks {
    async fn get_task(&self, ctx: RequestContext, req: GetTaskRequest) -> Result<Task, A2aError> {
        self.0.get_task(ctx, req).await
    }

    async fn list_tasks(
        &self,
        ctx: RequestContext,
        req: ListTasksRequest,
    ) -> Result<ListTasksResponse, A2aError> {
        self.0.list_tasks(ctx, req).await
    }
}

impl A2aService {
    /// A service dispatching to `handler`.
    pub fn new(handler: Arc<dyn RequestHandler>, limits: Limits) -> Self {
        Self {
            tasks: Arc::new(HandlerTasks(handler.clone())),
            handler: ServedHandler::Custom(handler),
            limits,
            extensions: ExtensionSet::default(),
            hygiene: None,
        }
    }

    /// A service dispatching to the default handler (a SendMessage answer then reuses the
    /// task's JSON its store encoded).
    #[cfg(any(feature = "server", test))]
    pub(crate) fn of_default(handler: Arc<super::DefaultRequestHandler>, limits: Limits) -> Self {
        Self {
            tasks: Arc::new(HandlerTasks(handler.clone())),
            handler: ServedHandler::Default(handler),
            limits,
            extensions: ExtensionSet::default(),
            hygiene: None,
        }
    }

    /// Negotiates `extensions` on every request.
    pub fn with_extensions(mut self, extensions: ExtensionSet) -> Self {
        self.extensions = extensions;
        self
    }

    /// Filters the extension metadata of every answer by `mode` (see [`MetadataHygiene`]).
    /// Call after [`with_extensions`](Self::with_extensions): the filter knows the extensions
    /// configured then.
    pub fn with_metadata_hygiene(mut self, mode: MetadataHygiene) -> Self {
        self.hygiene = Hygiene::of(mode, &self.extensions);
        self
    }

    /// The configured extensions.
    pub fn extensions(&self) -> &ExtensionSet {
        &self.extensions
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Checks that need no payload: the protocol version, then the required extensions.
    ///
    /// A missing or empty `A2A-Version` means 0.3, which this runtime does not serve; only
    /// `Major.Minor` counts (a patch number is ignored). The requested extensions are read from
    /// `A2A-Extensions` (and the legacy `X-A2A-Extensions`) into `ctx.extensions.requested`; a
    /// required extension that is not among them is ExtensionSupportRequired, before anything
    /// is activated.
    pub fn begin(&self, ctx: &mut RequestContext) -> Result<(), A2aError> {
        check_version(ctx.protocol_version.as_deref())?;
        if self.extensions.is_empty() {
            return Ok(());
        }
        // One pass finds the usual single value (names are stored lowercase).
        let mut found = ctx
            .headers
            .raw_values_where(|n| n == b"a2a-extensions" || n == b"x-a2a-extensions");
        let begun = match (found.next(), found.next()) {
            (None, _) => self.extensions.begin(None::<&[u8]>)?,
            (Some(value), None) => self.extensions.begin(Some(value))?,
            // Several: every `A2A-Extensions` value first, then the legacy header's.
            _ => self.extensions.begin(
                ctx.headers
                    .raw_values_where(|n| n == b"a2a-extensions")
                    .chain(ctx.headers.raw_values_where(|n| n == b"x-a2a-extensions")),
            )?,
        };
        if let Some(begun) = begun {
            ctx.extensions = begun;
        }
        Ok(())
    }

    /// Validates `req`, resolves the tenant, applies the limits, activates the requested
    /// extensions and runs their hooks around the operation.
    ///
    /// All of that up to the handler's call happens in this call; the future holds the
    /// handler's future and what the response hooks need.
    pub fn call(
        &self,
        mut ctx: RequestContext,
        mut req: A2aRequest,
    ) -> impl Future<Output = Result<OperationResponse, A2aError>> + Send + '_ {
        record_request(&ctx, &req);
        let pending = self.prepare(&mut ctx, &mut req).map(|negotiated| {
            // The response hooks get the request and its context: kept only for them.
            let answering = negotiated.as_ref().filter(|n| n.sees_responses()).map(|n| {
                let ctx = RequestContext {
                    extensions: Arc::new(n.without_values()),
                    ..ctx.clone()
                };
                Arc::new((req.clone(), ctx))
            });
            (dispatch(&self.handler, ctx, req), negotiated, answering)
        });
        let hygiene = self.hygiene.clone();
        async move {
            let (pending, negotiated, answering) = pending?;
            let (mut response, mut json) = pending.await?;
            if let A2aResponse::SendMessage(crate::types::SendMessageResponse::Task(t)) = &response
            {
                record_task(t.id.as_str(), t.context_id.as_str());
            }
            let active = negotiated.filter(|n| !n.activated.is_empty());
            let hooks = active.clone().zip(answering);
            if hooks.is_none() && hygiene.is_none() {
                return Ok(OperationResponse {
                    response,
                    json,
                    activated: active.map_or_else(Activated::default, Activated::of),
                });
            }
            // What the metadata hygiene keeps is decided by what is active.
            let seen = active.clone().unwrap_or_else(Negotiated::none);
            // In place: a unary result is not moved around.
            if let A2aResponse::Stream(events) = &mut response {
                let events = std::mem::replace(events, Box::pin(futures::stream::empty()));
                response = A2aResponse::Stream(Box::pin(events.map(move |item| {
                    let mut ev = item?;
                    // The hooks get a copy of a shared event.
                    let event = &mut Arc::make_mut(&mut ev).event;
                    if let Some((n, answering)) = &hooks {
                        let (req, ctx) = &**answering;
                        n.handle_response(&mut Reply::Event(event), req, ctx)?;
                    }
                    if let Some(hygiene) = &hygiene {
                        hygiene.event(event, &seen);
                    }
                    Ok(ev)
                })));
            } else if let Some(mut reply) = response.reply() {
                if let Some((n, answering)) = &hooks {
                    if n.hooks_responses() {
                        // The hooks may change the result: it is encoded after them.
                        json = None;
                    }
                    let (req, ctx) = &**answering;
                    n.handle_response(&mut reply, req, ctx)?;
                }
                if let Some(hygiene) = &hygiene {
                    json = None;
                    hygiene.reply(&mut reply, &seen);
                }
            }
            Ok(OperationResponse {
                response,
                json,
                activated: active.map_or_else(Activated::default, Activated::of),
            })
        }
    }

    /// The checks and request hooks of [`call`](Self::call); the negotiation, when extensions
    /// were requested.
    fn prepare(
        &self,
        ctx: &mut RequestContext,
        req: &mut A2aRequest,
    ) -> Result<Option<Arc<Negotiated>>, A2aError> {
        req.validate()?;
        if ctx.tenant.is_empty() {
            ctx.tenant = req.tenant().to_owned();
        } else {
            req.set_tenant(&ctx.tenant);
        }
        self.check_limits(req)?;
        if self.extensions.is_empty() || ctx.extensions.requested.is_empty() {
            return Ok(None);
        }
        ctx.extensions = self.extensions.activate_begun(&ctx.extensions, ctx)?;
        ctx.extensions.handle_request(req, ctx)?;
        Ok(Some(ctx.extensions.clone()))
    }

    /// The JSON-RPC name of the extension method served at REST `path`, if any.
    pub fn method_at(&self, path: &str) -> Option<&'static str> {
        self.extensions.method_at(path).map(|m| m.method())
    }

    /// True when an extension serves the method `name`.
    pub fn has_method(&self, name: &str) -> bool {
        self.extensions.method(name).is_some()
    }

    /// The method `name`, as its extension registered it, when an extension serves it.
    pub fn method_named(&self, name: &str) -> Option<&'static str> {
        self.extensions.method(name).map(|m| m.method())
    }

    /// Runs an extension method: the extension must be activated for this request (otherwise
    /// MethodNotFound naming the extension to activate). Returns the result and the activated
    /// URIs.
    pub async fn call_method(
        &self,
        mut ctx: RequestContext,
        name: &str,
        params: serde_json::Value,
    ) -> Result<(serde_json::Value, Activated), A2aError> {
        let Some(entry) = self.extensions.method(name) else {
            return Err(A2aError::MethodNotFound {
                method: name.to_owned(),
                hint: Vec::new(),
            });
        };
        let negotiated = self.extensions.activate_begun(&ctx.extensions, &ctx)?;
        if !negotiated.is_active_uri(entry.extension) {
            return Err(A2aError::MethodNotFound {
                method: name.to_owned(),
                hint: vec![
                    ("extension".to_owned(), entry.extension.to_owned()),
                    (
                        "activate".to_owned(),
                        format!("send the header A2A-Extensions: {}", entry.extension),
                    ),
                ],
            });
        }
        if let Some(t) = params.get("tenant").and_then(serde_json::Value::as_str)
            && ctx.tenant.is_empty()
        {
            ctx.tenant = t.to_owned();
        }
        let activated = Activated::of(negotiated.clone());
        ctx.extensions = negotiated;
        let mcx = crate::extension::MethodContext {
            request: ctx,
            handler: Some(self.tasks.clone()),
        };
        let span =
            tracing::debug_span!("a2a_extension_method", method = name, uri = entry.extension);
        let result = tracing::Instrument::instrument((entry.handler)(mcx, params), span).await?;
        Ok((result, activated))
    }

    /// The state of task `id` as the caller of `ctx` sees it (`None`: no such task), read
    /// without the hooks of a request (the pipeline's quotas recheck live tasks with it).
    pub(crate) async fn task_state(
        &self,
        ctx: RequestContext,
        id: crate::types::TaskId,
    ) -> Result<Option<crate::types::TaskState>, A2aError> {
        let req = GetTaskRequest {
            tenant: ctx.tenant.clone(),
            id,
            history_length: Some(0),
        };
        match self.tasks.get_task(ctx, req).await {
            Ok(task) => Ok(Some(task.status.state)),
            Err(A2aError::TaskNotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
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
    // The usual value, compared whole before it is parsed.
    if header == Some(crate::PROTOCOL_VERSION) {
        return Ok(());
    }
    let requested = header
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .unwrap_or("0.3");
    let major_minor = major_minor(requested);
    if SUPPORTED_VERSIONS.iter().any(|v| Some(*v) == major_minor) {
        Ok(())
    } else {
        Err(A2aError::VersionNotSupported {
            requested: requested.to_owned(),
            supported: SUPPORTED_VERSIONS.iter().map(|s| (*s).to_owned()).collect(),
        })
    }
}

/// `1.0` and `1.0.3` → `1.0`; anything else → `None`.
fn major_minor(v: &str) -> Option<&str> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let mut parts = v.splitn(3, '.');
    let major = parts.next()?;
    let minor = parts.next()?;
    let patch_ok = parts.next().is_none_or(digits);
    (digits(major) && digits(minor) && patch_ok).then(|| &v[..major.len() + 1 + minor.len()])
}

/// Runs one request on a handler.
// The handler's future is created by this call; the one returned wraps its output in an
// `A2aResponse` (no allocation besides the handler's own).
pub(crate) fn dispatch<'a>(
    served: &'a ServedHandler,
    ctx: RequestContext,
    req: A2aRequest,
) -> Dispatch<'a> {
    let handler = served.as_dyn();
    Dispatch(match req {
        A2aRequest::SendMessage(r) => Pending::SendMessage(served.send_message(ctx, r)),
        A2aRequest::SendStreamingMessage(r) => {
            Pending::Stream(handler.send_streaming_message(ctx, r))
        }
        A2aRequest::GetTask(r) => Pending::Task(handler.get_task(ctx, r)),
        A2aRequest::ListTasks(r) => Pending::ListTasks(handler.list_tasks(ctx, r)),
        A2aRequest::CancelTask(r) => Pending::Task(handler.cancel_task(ctx, r)),
        A2aRequest::SubscribeToTask(r) => Pending::Stream(handler.subscribe_to_task(ctx, r)),
        A2aRequest::CreateTaskPushNotificationConfig(r) => {
            Pending::PushConfig(handler.create_task_push_notification_config(ctx, r))
        }
        A2aRequest::GetTaskPushNotificationConfig(r) => {
            Pending::PushConfig(handler.get_task_push_notification_config(ctx, r))
        }
        A2aRequest::ListTaskPushNotificationConfigs(r) => {
            Pending::PushConfigs(handler.list_task_push_notification_configs(ctx, r))
        }
        A2aRequest::DeleteTaskPushNotificationConfig(r) => {
            Pending::Empty(handler.delete_task_push_notification_config(ctx, r))
        }
        A2aRequest::GetExtendedAgentCard(r) => {
            Pending::AgentCard(handler.get_extended_agent_card(ctx, r))
        }
    })
}

/// The future of [`dispatch`].
#[must_use = "futures do nothing unless polled"]
pub(crate) struct Dispatch<'a>(Pending<'a>);

/// The handler's future, by the shape of its output.
enum Pending<'a> {
    SendMessage(BoxFuture<'a, Result<(SendMessageResponse, Option<bytes::Bytes>), A2aError>>),
    Task(BoxFuture<'a, Result<Task, A2aError>>),
    ListTasks(BoxFuture<'a, Result<ListTasksResponse, A2aError>>),
    PushConfig(BoxFuture<'a, Result<TaskPushNotificationConfig, A2aError>>),
    PushConfigs(BoxFuture<'a, Result<ListTaskPushNotificationConfigsResponse, A2aError>>),
    Empty(BoxFuture<'a, Result<Empty, A2aError>>),
    AgentCard(BoxFuture<'a, Result<AgentCard, A2aError>>),
    Stream(BoxFuture<'a, Result<EventStream, A2aError>>),
}

impl fmt::Debug for Dispatch<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Dispatch(..)")
    }
}

impl Future for Dispatch<'_> {
    /// The response, and its JSON when the handler wrote it already.
    type Output = Result<(A2aResponse, Option<bytes::Bytes>), A2aError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        /// Polls `f`, wrapping what it returns with `wrap`.
        fn wrapped<T>(
            f: &mut BoxFuture<'_, Result<T, A2aError>>,
            cx: &mut Context<'_>,
            wrap: impl FnOnce(T) -> A2aResponse,
        ) -> Poll<Result<(A2aResponse, Option<bytes::Bytes>), A2aError>> {
            f.as_mut().poll(cx).map_ok(|r| (wrap(r), None))
        }
        match &mut self.0 {
            Pending::SendMessage(f) => f
                .as_mut()
                .poll(cx)
                .map_ok(|(r, json)| (A2aResponse::SendMessage(r), json)),
            Pending::Task(f) => wrapped(f, cx, A2aResponse::Task),
            Pending::ListTasks(f) => wrapped(f, cx, A2aResponse::ListTasks),
            Pending::PushConfig(f) => wrapped(f, cx, A2aResponse::PushConfig),
            Pending::PushConfigs(f) => wrapped(f, cx, A2aResponse::PushConfigs),
            Pending::Empty(f) => wrapped(f, cx, A2aResponse::Empty),
            Pending::AgentCard(f) => wrapped(f, cx, |card| A2aResponse::AgentCard(Box::new(card))),
            Pending::Stream(f) => wrapped(f, cx, A2aResponse::Stream),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
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
            Some("1.0."),
            Some("1.0.7.1"),
            Some("1..0"),
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

    /// Completes every task with one artifact.
    struct Done;

    impl crate::core::AgentExecutor for Done {
        async fn execute(
            &self,
            _: crate::core::AgentContext,
            events: crate::core::EventSink,
        ) -> Result<(), A2aError> {
            events
                .artifact(crate::types::Artifact::new([crate::types::Part::text(
                    "done",
                )]))
                .await?;
            events.complete().await
        }
    }

    /// Results observed by [`Watch`], every instance.
    static WATCHED: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

    /// Counts the SendMessage results it observes, and checks they carry their task.
    #[crate::a2a_extension(uri = "https://example.com/test/watch/v1")]
    #[derive(Default, serde::Serialize, serde::Deserialize)]
    struct Watch {}

    impl crate::extension::ExtensionHooks for Watch {
        type Activation = ();

        fn observe_response(
            &self,
            reply: &Reply<'_>,
            _: &mut (),
            _: &crate::protocol::A2aRequest,
            _: &crate::extension::RequestContext,
        ) -> Result<(), A2aError> {
            if let Reply::SendMessage(SendMessageResponse::Task(task)) = reply {
                assert_eq!(task.artifacts.len(), 1);
                WATCHED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            Ok(())
        }
    }

    /// Stamps SendMessage's task.
    #[crate::a2a_extension(uri = "https://example.com/test/stamp/v1")]
    #[derive(Default, serde::Serialize, serde::Deserialize)]
    struct Stamp {}

    impl crate::extension::ExtensionHooks for Stamp {
        type Activation = ();

        fn handle_response(
            &self,
            reply: &mut Reply<'_>,
            _: &mut (),
            request: &crate::protocol::A2aRequest,
            ctx: &crate::extension::RequestContext,
        ) -> Result<(), A2aError> {
            // The request it answers, and its context: it sees what is active, and reading a
            // value through it answers (None) rather than waiting for the hooks' own lock.
            assert!(matches!(
                request,
                crate::protocol::A2aRequest::SendMessage(_)
            ));
            assert!(ctx.is_active::<Stamp>() && ctx.is_active::<Watch>());
            assert_eq!(ctx.extension::<Watch>(), None);
            if let Reply::SendMessage(SendMessageResponse::Task(task)) = reply {
                task.metadata.insert("stamp".into(), serde_json::json!(1));
            }
            Ok(())
        }
    }

    #[tokio::test]
    async fn a_result_is_encoded_after_the_response_hooks_of_active_extensions() {
        use crate::extension::Extension as _;
        let mut config = crate::extension::registry::ExtensionConfig::new();
        config.linked = false;
        config.add(Watch {});
        config.add(Stamp {});
        let handler = Arc::new(crate::core::DefaultRequestHandler::new(
            Done,
            Arc::new(crate::store::InMemoryTaskStore::new()),
            Arc::new(crate::store::InMemoryPushConfigStore::new()),
            Arc::new(AgentCard::default()),
            Limits::default(),
        ));
        let service = A2aService::of_default(handler, Limits::default())
            .with_extensions(config.resolve().unwrap());
        let both = format!("{}, {}", Watch::URI, Stamp::URI);
        for (round, (header, stamped)) in [(Watch::URI, false), (&both[..], true)]
            .into_iter()
            .cycle()
            .take(6)
            .enumerate()
        {
            let mut ctx = RequestContext::v1();
            ctx.headers.push("A2A-Extensions", header);
            service.begin(&mut ctx).unwrap();
            let req = A2aRequest::SendMessage(crate::types::SendMessageRequest {
                message: crate::types::Message::user_text("hi"),
                ..Default::default()
            });
            let before = WATCHED.load(std::sync::atomic::Ordering::SeqCst);
            let served = service.call(ctx, req).await.unwrap();
            assert_eq!(
                WATCHED.load(std::sync::atomic::Ordering::SeqCst) - before,
                1,
                "round {round}"
            );
            // Any active extension with hooks may change the result: it is encoded after them.
            assert!(served.json.is_none(), "round {round}");
            let A2aResponse::SendMessage(SendMessageResponse::Task(task)) = served.response()
            else {
                panic!("round {round}: {:?}", served.response());
            };
            assert_eq!(task.metadata.contains_key("stamp"), stamped);
            let expected =
                crate::json::writer::to_vec(&SendMessageResponse::Task(task.clone())).unwrap();
            assert_eq!(
                served.to_json().unwrap().unwrap(),
                expected,
                "round {round}"
            );
        }
    }
}

/// Records what the request is on the current span (the binding's request span): operation,
/// task and context ids, tenant, principal. Nothing when no subscriber wants the span.
fn record_request(ctx: &RequestContext, req: &A2aRequest) {
    #[cfg(feature = "metrics")]
    note_operation(req.operation().method());
    let span = tracing::Span::current();
    if span.is_disabled() {
        return;
    }
    span.record("operation", req.operation().method());
    let tenant = if ctx.tenant.is_empty() {
        req.tenant()
    } else {
        ctx.tenant.as_str()
    };
    if !tenant.is_empty() {
        span.record("tenant", tenant);
    }
    span.record("principal", &*ctx.principal.id);
    let (task, context) = match req {
        A2aRequest::SendMessage(r) | A2aRequest::SendStreamingMessage(r) => {
            (r.message.task_id.as_str(), r.message.context_id.as_str())
        }
        A2aRequest::GetTask(r) => (r.id.as_str(), ""),
        A2aRequest::CancelTask(r) => (r.id.as_str(), ""),
        A2aRequest::SubscribeToTask(r) => (r.id.as_str(), ""),
        A2aRequest::CreateTaskPushNotificationConfig(r) => (r.task_id.as_str(), ""),
        A2aRequest::GetTaskPushNotificationConfig(r) => (r.task_id.as_str(), ""),
        A2aRequest::ListTaskPushNotificationConfigs(r) => (r.task_id.as_str(), ""),
        A2aRequest::DeleteTaskPushNotificationConfig(r) => (r.task_id.as_str(), ""),
        A2aRequest::ListTasks(_) | A2aRequest::GetExtendedAgentCard(_) => ("", ""),
    };
    record_task(task, context);
}

/// Records the task and context ids on the current span (empty ones are left out).
fn record_task(task: &str, context: &str) {
    let span = tracing::Span::current();
    if span.is_disabled() {
        return;
    }
    if !task.is_empty() {
        span.record("task_id", task);
    }
    if !context.is_empty() {
        span.record("context_id", context);
    }
}

#[cfg(feature = "metrics")]
tokio::task_local! {
    /// Where the method of the request being served is noted, for its metrics.
    static OPERATION: std::rc::Rc<std::cell::Cell<Option<&'static str>>>;
}

/// Notes `method` (an operation's or an extension method's name) as the method of the request
/// being served, for its metrics; nothing outside [`noting_operation`].
#[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
pub(crate) fn note_operation(method: &'static str) {
    #[cfg(feature = "metrics")]
    let _ = OPERATION.try_with(|slot| slot.set(Some(method)));
}

/// Runs `fut`, and tells which method it served (when it got as far as reading one).
#[cfg(feature = "metrics")]
pub(crate) async fn noting_operation<F: Future>(fut: F) -> (F::Output, Option<&'static str>) {
    let slot = std::rc::Rc::new(std::cell::Cell::new(None));
    let out = OPERATION.scope(slot.clone(), fut).await;
    (out, slot.get())
}
