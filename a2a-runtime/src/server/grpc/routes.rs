//! The gRPC listener's two services on one port: `lf.a2a.v1.A2AService`, and the extension
//! methods' service when an extension adds methods.

use std::convert::Infallible;
use std::task::{Context, Poll};

use futures::future::Either;
use tonic::body::Body;
use tonic::codegen::{Service, http};

/// The path prefix of the extension methods' service.
const METHODS_PREFIX: &str = "/a2a_runtime.extensions.v1.ExtensionMethods/";

/// Routes a call by its path: to `methods` below [`METHODS_PREFIX`] (when there is such a
/// service), to `api` otherwise (which answers UNIMPLEMENTED for paths it does not serve).
#[derive(Clone, Debug)]
pub(super) struct Routes<A, M> {
    pub(super) api: A,
    pub(super) methods: Option<M>,
}

impl<A, M> Service<http::Request<Body>> for Routes<A, M>
where
    A: Service<http::Request<Body>, Response = http::Response<Body>, Error = Infallible>,
    M: Service<http::Request<Body>, Response = http::Response<Body>, Error = Infallible>,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = Either<A::Future, M::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // Both generated services are always ready; ask both all the same.
        if let Some(methods) = &mut self.methods
            && methods.poll_ready(cx).is_pending()
        {
            return Poll::Pending;
        }
        self.api.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        match &mut self.methods {
            Some(methods) if req.uri().path().starts_with(METHODS_PREFIX) => {
                Either::Right(methods.call(req))
            }
            _ => Either::Left(self.api.call(req)),
        }
    }
}
