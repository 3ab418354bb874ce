//! The actix routes of the bindings, the agent card and the OpenAPI document.

use actix_web::{HttpRequest, HttpResponse, web};

use super::{A2aServer, Inner, WELL_KNOWN_PATH, rest, v0_3_rest};
use crate::protocol::Operation;

/// The card route; `at_root`: registered at the root for bindings mounted elsewhere.
pub(super) fn register_card(cfg: &mut web::ServiceConfig, inner: web::Data<Inner>, at_root: bool) {
    cfg.route(
        WELL_KNOWN_PATH,
        web::get().to(move |req: HttpRequest| {
            let inner = inner.clone();
            async move {
                if inner.urls.is_fixed() {
                    inner.card().respond(&req)
                } else {
                    let mount = if at_root { inner.urls.mount() } else { None };
                    inner.urls.derived(&req, mount).respond(&req)
                }
            }
        }),
    );
}

/// The OpenAPI document's route, when it is served.
#[cfg(feature = "openapi")]
pub(super) fn register_openapi(cfg: &mut web::ServiceConfig, inner: &web::Data<Inner>) {
    if let Some(doc) = &inner.openapi {
        let inner = inner.clone();
        cfg.route(
            &doc.path,
            web::get().to(move |req: HttpRequest| {
                let inner = inner.clone();
                async move {
                    match &inner.openapi {
                        Some(doc) => doc.respond(&req),
                        None => HttpResponse::NotFound().finish(),
                    }
                }
            }),
        );
    }
}

pub(super) fn register_rest(cfg: &mut web::ServiceConfig, inner: &web::Data<Inner>, base: &str) {
    register_routes(cfg, inner, base, super::rest_routes::ROUTES, rest::handle);
}

pub(super) fn register_v0_3_rest(
    cfg: &mut web::ServiceConfig,
    inner: &web::Data<Inner>,
    base: &str,
) {
    let routes = crate::compat::v0_3::rest::ROUTES;
    register_routes(cfg, inner, base, routes, v0_3_rest::handle);
}

/// Registers `routes` below `base`, each served by `serve`.
fn register_routes<F, Fut>(
    cfg: &mut web::ServiceConfig,
    inner: &web::Data<Inner>,
    base: &str,
    routes: &'static [(&'static str, &'static str, Operation)],
    serve: F,
) where
    F: Fn(web::Data<Inner>, HttpRequest, web::Payload, Operation) -> Fut + Copy + 'static,
    Fut: std::future::Future<Output = HttpResponse> + 'static,
{
    // Group routes by path so one resource answers every method of a path (405 otherwise).
    let mut seen: Vec<&str> = Vec::new();
    for (_, path, _) in routes {
        if seen.contains(path) {
            continue;
        }
        seen.push(path);
        let mut resource = web::resource(format!("{base}{path}"));
        for (method, p, op) in routes {
            if p != path {
                continue;
            }
            let inner = inner.clone();
            let op: Operation = *op;
            let handler = move |req: HttpRequest, payload: web::Payload| {
                let inner = inner.clone();
                async move {
                    let r = req.clone();
                    super::observe::observe("HTTP+JSON", &r, serve(inner, req, payload, op)).await
                }
            };
            let route = match *method {
                "GET" => web::get(),
                "POST" => web::post(),
                _ => web::delete(),
            };
            resource = resource.route(route.to(handler));
        }
        cfg.service(resource);
    }
}

/// 405 Method Not Allowed, naming the allowed method.
pub(super) fn method_not_allowed(allowed: &'static str) -> HttpResponse {
    HttpResponse::MethodNotAllowed()
        .insert_header((actix_web::http::header::ALLOW, allowed))
        .finish()
}

impl A2aServer {
    /// Registers the routes (both bindings and the agent card) on an actix-web `App` or scope.
    ///
    /// The card is served at `/.well-known/agent-card.json` relative to where this is mounted.
    /// Without [`url`](super::A2aServerBuilder::url), its interfaces point at the request's host and
    /// the path the card was requested under. To mount under a scope with the card also at the
    /// root, use [`A2aServer::mount`].
    pub fn config(&self) -> impl Fn(&mut web::ServiceConfig) + Clone + 'static {
        let inner = self.inner.clone();
        move |cfg: &mut web::ServiceConfig| {
            register_card(cfg, inner.clone(), false);
            #[cfg(feature = "openapi")]
            register_openapi(cfg, &inner);
            let rpc = inner.clone();
            let rpc_handler = move |req: HttpRequest, payload: web::Payload| {
                let inner = rpc.clone();
                async move {
                    if req.method() != actix_web::http::Method::POST {
                        return method_not_allowed("POST");
                    }
                    let r = req.clone();
                    super::observe::observe(
                        "JSONRPC",
                        &r,
                        super::jsonrpc::handle(inner, req, payload),
                    )
                    .await
                }
            };
            // Two plain resources rather than one with two patterns: actix matches a
            // multi-pattern resource with a regex on every request. No method guard either: a
            // guard records the methods it checked in a per-request map (three allocations on
            // every request); the handler answers other methods with 405 itself. With a slash
            // first: at the root the other path is empty, and matching an empty pattern
            // compares zero bytes at a dangling pointer, which the CPU may make slow (see
            // `Scope`'s `PartialEq`); a request reaches it only through a mounting scope.
            let path = inner.jsonrpc_path.trim_end_matches('/').to_owned();
            cfg.service(
                web::resource(format!("{path}/")).route(web::route().to(rpc_handler.clone())),
            );
            cfg.service(web::resource(path).route(web::route().to(rpc_handler)));
            if inner.pipeline.service().extensions().has_methods() {
                for prefix in ["", "/{tenant}"] {
                    let methods = inner.clone();
                    let handler = move |req: HttpRequest, payload: web::Payload| {
                        let inner = methods.clone();
                        async move {
                            let r = req.clone();
                            super::observe::observe(
                                "HTTP+JSON",
                                &r,
                                rest::handle_method(inner, req, payload),
                            )
                            .await
                        }
                    };
                    let base = inner.rest_path.trim_end_matches('/');
                    cfg.route(
                        &format!("{base}{prefix}/extensions/{{tail:.*}}"),
                        web::post().to(handler),
                    );
                }
            }
            // Before the tenant routes: `/v1/...` is also a path of tenant `v1`.
            if inner.pipeline.versions().v0_3 {
                register_v0_3_rest(cfg, &inner, inner.rest_path.trim_end_matches('/'));
            }
            for prefix in [String::new(), "/{tenant}".to_owned()] {
                register_rest(
                    cfg,
                    &inner,
                    &format!("{}{}", inner.rest_path.trim_end_matches('/'), prefix),
                );
            }
        }
    }

    /// Registers the bindings under the scope `path` and the agent card both at the root's
    /// `/.well-known/agent-card.json` and under `path`; without
    /// [`url`](super::A2aServerBuilder::url), the card's interfaces point at the request's host and
    /// `path`.
    ///
    /// # Panics
    /// When the server was mounted at another path already (its card can point at one place
    /// only): a startup error.
    pub fn mount(&self, path: &str) -> impl Fn(&mut web::ServiceConfig) + Clone + 'static {
        assert!(
            self.inner.urls.set_mount(path),
            "A2aServer::mount({path:?}): this server is mounted at {:?} already",
            self.inner.urls.mount().unwrap_or_default()
        );
        let inner = self.inner.clone();
        let scope = self.inner.urls.mount().unwrap_or_default().to_owned();
        let config = self.config();
        move |cfg: &mut web::ServiceConfig| {
            if scope.is_empty() {
                config(cfg);
            } else {
                register_card(cfg, inner.clone(), true);
                cfg.service(web::scope(&scope).configure(config.clone()));
            }
        }
    }

    /// Registers only the agent card at `/.well-known/agent-card.json` (for mounting at the root
    /// when the bindings live under a scope given to [`url`](super::A2aServerBuilder::url); see
    /// [`A2aServer::mount`] to have both registered together).
    ///
    /// # Panics
    /// When the builder had no [`url`](super::A2aServerBuilder::url) and the server was not
    /// [`mount`](A2aServer::mount)ed: the card could not tell where the bindings are (a
    /// startup error, rather than a card pointing at the wrong place).
    pub fn well_known(&self) -> impl Fn(&mut web::ServiceConfig) + Clone + 'static {
        assert!(
            self.inner.urls.is_fixed() || self.inner.urls.mount().is_some(),
            "A2aServer::well_known(): the card cannot tell where the bindings are mounted; \
             give the builder .url(\"https://host/path\") or use A2aServer::mount(\"/path\")"
        );
        let inner = self.inner.clone();
        move |cfg: &mut web::ServiceConfig| register_card(cfg, inner.clone(), true)
    }
}
