//! [`A2aError`] as an actix-web error, so that a user's own routes beside the agent can return
//! it with `?`: the HTTP+JSON error body with the error's HTTP status. An internal error is
//! answered as the pipeline answers one: a correlation id on the wire, its cause in the log.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};

use crate::error::A2aError;

impl ResponseError for A2aError {
    fn status_code(&self) -> StatusCode {
        StatusCode::from_u16(self.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    fn error_response(&self) -> HttpResponse {
        if self.is_internal() {
            return super::rest::error_response(&self.clone().for_caller(false));
        }
        super::rest::error_response(self)
    }
}

#[cfg(test)]
mod tests {
    use actix_web::{App, test, web};

    use crate::error::A2aError;

    async fn lookup(path: web::Path<String>) -> Result<String, A2aError> {
        let id = path.into_inner();
        if id == "known" {
            return Ok("found".into());
        }
        std::fs::read("/nonexistent/a2a-runtime-route")?;
        Err(A2aError::TaskNotFound { task_id: id })
    }

    #[actix_web::test]
    async fn a_users_route_returns_a2a_errors_as_http_json() {
        let app = test::init_service(App::new().route("/lookup/{id}", web::get().to(lookup))).await;
        let resp = test::call_service(
            &app,
            test::TestRequest::get().uri("/lookup/known").to_request(),
        )
        .await;
        assert_eq!(resp.status(), 200);
        // `?` on an io::Error: 500 with the REST error body, the cause withheld.
        let resp = test::call_service(
            &app,
            test::TestRequest::get().uri("/lookup/other").to_request(),
        )
        .await;
        assert_eq!(resp.status(), 500);
        assert_eq!(
            resp.headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok()),
            Some("application/json")
        );
        let body: serde_json::Value = test::read_body_json(resp).await;
        assert_eq!(body["error"]["code"], 500);
        assert_eq!(body["error"]["status"], "INTERNAL");
        assert!(
            body["error"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("Internal error: ") && m.contains("correlation id")),
            "{body}"
        );
        assert!(!body.to_string().contains("nonexistent"), "{body}");
        assert!(!body.to_string().contains("No such file"), "{body}");
    }
}
