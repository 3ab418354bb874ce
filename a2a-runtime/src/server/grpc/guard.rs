//! Refuses requests that are not gRPC before they reach the service: a `content-type` that is
//! not `application/grpc[+proto|;…]` gets HTTP 415, as the gRPC-over-HTTP/2 protocol asks.
//! Also reports a request message over the size limit as RESOURCE_EXHAUSTED (the code gRPC's
//! status-code guide gives it; tonic's decoder says OUT_OF_RANGE).

use std::task::{Context, Poll};

use futures::TryFutureExt as _;
use futures::future::{Either, MapOk, Ready, ready};
use tonic::body::Body;
use tonic::codegen::Service;
use tonic::codegen::http::{HeaderValue, Request, Response, StatusCode, header};

/// Wraps a service in [`ContentTypeGuard`].
#[derive(Clone, Copy, Debug)]
pub(super) struct ContentTypeLayer;

impl<S> tower_layer::Layer<S> for ContentTypeLayer {
    type Service = ContentTypeGuard<S>;

    fn layer(&self, inner: S) -> Self::Service {
        ContentTypeGuard { inner }
    }
}

/// See the module docs.
#[derive(Clone, Debug)]
pub(super) struct ContentTypeGuard<S> {
    inner: S,
}

/// True for `application/grpc`, `application/grpc+proto`, `application/grpc;…`.
fn is_grpc(value: Option<&HeaderValue>) -> bool {
    let Some(v) = value.map(HeaderValue::as_bytes) else {
        return false;
    };
    let base = b"application/grpc";
    v.len() >= base.len()
        && v[..base.len()].eq_ignore_ascii_case(base)
        && matches!(v.get(base.len()), None | Some(b'+' | b';'))
        && !v[base.len()..].to_ascii_lowercase().starts_with(b"+json")
}

/// The response rewrite applied to every gRPC answer.
type Fix = fn(Response<Body>) -> Response<Body>;

/// A trailers-only OUT_OF_RANGE answer for a request message over the limit becomes
/// RESOURCE_EXHAUSTED (8).
fn too_large_is_resource_exhausted(mut response: Response<Body>) -> Response<Body> {
    let headers = response.headers_mut();
    let too_large = headers
        .get("grpc-status")
        .is_some_and(|s| s.as_bytes() == b"11")
        && headers.get("grpc-message").is_some_and(|m| {
            // `grpc-message` is percent-encoded on the wire.
            let has = |needle: &[u8]| m.as_bytes().windows(needle.len()).any(|w| w == needle);
            has(b"decoded%20message%20length%20too%20large")
                || has(b"decoded message length too large")
        });
    if too_large {
        headers.insert("grpc-status", HeaderValue::from_static("8"));
    }
    response
}

impl<S, B> Service<Request<B>> for ContentTypeGuard<S>
where
    S: Service<Request<B>, Response = Response<Body>>,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = Either<MapOk<S::Future, Fix>, Ready<Result<Response<Body>, S::Error>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        if is_grpc(req.headers().get(header::CONTENT_TYPE)) {
            return Either::Left(
                self.inner
                    .call(req)
                    .map_ok(too_large_is_resource_exhausted as Fix),
            );
        }
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::UNSUPPORTED_MEDIA_TYPE;
        response.headers_mut().insert(
            header::ACCEPT,
            HeaderValue::from_static("application/grpc, application/grpc+proto"),
        );
        Either::Right(ready(Ok(response)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_grpc_protobuf_content_types_pass() {
        let v = |s: &'static str| Some(HeaderValue::from_static(s));
        for ok in [
            "application/grpc",
            "application/grpc+proto",
            "Application/GRPC; x=1",
        ] {
            assert!(is_grpc(v(ok).as_ref()), "{ok}");
        }
        for bad in [
            "application/json",
            "application/grpc-web",
            "application/grpc+json",
            "text/plain",
        ] {
            assert!(!is_grpc(v(bad).as_ref()), "{bad}");
        }
        assert!(!is_grpc(None));
    }
}
