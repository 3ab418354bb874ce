//! Which handler a service dispatches to.

use std::sync::Arc;

use futures::FutureExt as _;
use futures::future::BoxFuture;

use super::default::DefaultRequestHandler;
use super::request_handler::RequestHandler;
use crate::error::A2aError;
use crate::extension::RequestContext;
use crate::types::{SendMessageRequest, SendMessageResponse};

/// The handler a service dispatches to: the default one, whose SendMessage answer comes with
/// the task's JSON when its store encoded the final task already (the reply then reuses those
/// bytes), or any other, whose answer the binding encodes.
#[derive(Clone)]
pub(crate) enum ServedHandler {
    // Built by the server's builder only.
    #[cfg_attr(not(feature = "server"), allow(dead_code))]
    Default(Arc<DefaultRequestHandler>),
    Custom(Arc<dyn RequestHandler>),
}

impl ServedHandler {
    /// The handler, for the operations that need nothing more.
    pub(crate) fn as_dyn(&self) -> &dyn RequestHandler {
        match self {
            ServedHandler::Default(h) => h.as_ref(),
            ServedHandler::Custom(h) => h.as_ref(),
        }
    }

    /// SendMessage, with the task's JSON when the default handler has it at hand.
    pub(crate) fn send_message(
        &self,
        ctx: RequestContext,
        req: SendMessageRequest,
    ) -> BoxFuture<'_, Result<(SendMessageResponse, Option<bytes::Bytes>), A2aError>> {
        match self {
            ServedHandler::Default(h) => Box::pin(h.send(ctx, req)),
            ServedHandler::Custom(h) => Box::pin(
                h.send_message(ctx, req)
                    .map(|r| r.map(|response| (response, None))),
            ),
        }
    }
}
