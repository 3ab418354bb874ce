//! The OpenAPI 3.1 document of the HTTP+JSON binding (feature `openapi`), served at the route
//! given to [`A2aServerBuilder::openapi`](super::A2aServerBuilder::openapi).
//!
//! Nothing in it is written by hand but the error body (`google.rpc.Status` in AIP-193 form, as
//! the spec's HTTP+JSON error section has it): the paths come from the binding's route table
//! ([`rest_routes::ROUTES`], the one the router registers), the operations' messages and streaming
//! from the proto's service, and the component schemas from the proto's messages by the
//! ProtoJSON rules (generated at build time, see `build_openapi.rs`). The document is built
//! once, when the server is built; a request only prefixes the `servers` entry.

use actix_web::{HttpRequest, HttpResponse};
use serde_json::{Map, Value, json};

use super::http::A2A_JSON;
use super::rest_routes;
use crate::types::AgentCard;

/// The schemas and the service's methods, generated from `proto/a2a.proto` at build time.
const PARTS: &str = include_str!(concat!(env!("OUT_DIR"), "/openapi_parts.json"));

/// Where components are referenced from.
const REF: &str = "#/components/schemas/";

/// The component of the error body.
const ERROR: &str = "ErrorResponse";

/// The served document: its path and its JSON without the leading `{`.
pub(crate) struct Document {
    /// The route, below where the server is mounted.
    pub(crate) path: String,
    tail: String,
}

impl Document {
    /// The document of the routes served under `rest_path`, at `path`.
    pub(crate) fn new(path: &str, card: &AgentCard, rest_path: &str) -> Result<Self, String> {
        let doc = build(card, rest_path)?;
        let text = serde_json::to_string(&doc).map_err(|e| e.to_string())?;
        let tail = text.strip_prefix('{').unwrap_or(&text).to_owned();
        Ok(Self {
            path: normalize(path),
            tail,
        })
    }

    /// The document as served for `req`: its `servers` entry is where this route was reached,
    /// less the route itself.
    pub(crate) fn respond(&self, req: &HttpRequest) -> HttpResponse {
        let mount = req.path().strip_suffix(&self.path).unwrap_or_default();
        let base = if mount.is_empty() { "/" } else { mount };
        let server = serde_json::to_string(base).unwrap_or_else(|_| "\"/\"".to_owned());
        let mut body = String::with_capacity(self.tail.len() + server.len() + 24);
        body.push_str("{\"servers\":[{\"url\":");
        body.push_str(&server);
        body.push_str("}],");
        body.push_str(&self.tail);
        HttpResponse::Ok()
            .insert_header(super::http::content_type("application/json"))
            .body(body)
    }
}

fn normalize(path: &str) -> String {
    format!("/{}", path.trim_start_matches('/'))
}

/// JSON objects by name: the component schemas, or the service's methods.
type Named = Map<String, Value>;

/// The generated parts: component schemas and methods.
fn parts() -> Result<(Named, Named), String> {
    let mut parts: Map<String, Value> =
        serde_json::from_str(PARTS).map_err(|e| format!("the generated schemas: {e}"))?;
    let mut take = |key: &str| match parts.remove(key) {
        Some(Value::Object(m)) => Ok(m),
        _ => Err(format!("the generated schemas have no {key:?}")),
    };
    Ok((take("schemas")?, take("methods")?))
}

/// The whole document but `servers`.
fn build(card: &AgentCard, rest_path: &str) -> Result<Value, String> {
    let (mut schemas, methods) = parts()?;
    schemas.insert(ERROR.to_owned(), error_schema());
    let base = rest_path.trim_end_matches('/');
    let base = if base.is_empty() || base.starts_with('/') {
        base.to_owned()
    } else {
        format!("/{base}")
    };
    let mut paths = Map::new();
    for tenant in [false, true] {
        for (i, (method, path, op)) in rest_routes::ROUTES.iter().enumerate() {
            let name = op.method();
            let Some(rpc) = methods.get(name) else {
                return Err(format!("the proto's service has no method {name}"));
            };
            let template = if tenant {
                format!("{base}/{{tenant}}{path}")
            } else {
                format!("{base}{path}")
            };
            // Unique operation ids: the HTTP method when an operation has several routes, the
            // tenant when it is in the path.
            let mut id = name.to_owned();
            if rest_routes::ROUTES[..i].iter().any(|(_, _, o)| o == op) {
                id.push_str(&capitalized(method));
            }
            if tenant {
                id.push_str("InTenant");
            }
            let operation = operation(&id, method, &template, rpc, &schemas)?;
            let item = paths
                .entry(template)
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(item) = item {
                item.insert(method.to_ascii_lowercase(), operation);
            }
        }
    }
    Ok(json!({
        "openapi": "3.1.0",
        "info": {
            "title": format!("{} (A2A HTTP+JSON)", card.name),
            "version": card.version,
            "description": format!(
                "{}\n\nThe A2A v{} HTTP+JSON binding of this agent. Bodies are ProtoJSON; \
                 errors are google.rpc.Status (AIP-193).",
                card.description,
                crate::PROTOCOL_VERSION
            ),
        },
        "paths": paths,
        "components": {"schemas": schemas},
    }))
}

fn capitalized(method: &str) -> String {
    let lower = method.to_ascii_lowercase();
    let mut chars = lower.chars();
    match chars.next() {
        Some(c) => c.to_ascii_uppercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

/// One operation: its parameters (path, query, headers), body and responses.
fn operation(
    id: &str,
    method: &str,
    template: &str,
    rpc: &Value,
    schemas: &Map<String, Value>,
) -> Result<Value, String> {
    let input = &rpc["input"];
    let output = &rpc["output"];
    let streaming = rpc["streaming"].as_bool().unwrap_or(false);
    let bound = path_params(template);
    let mut parameters: Vec<Value> = bound
        .iter()
        .map(|name| {
            json!({
                "name": name, "in": "path", "required": true,
                "schema": {"type": "string", "minLength": 1},
            })
        })
        .collect();
    // As the binding reads them (rest.rs): POST takes the request message as its body, GET
    // and DELETE the message's scalar fields from the query string.
    let body = method == "POST";
    if !body {
        let fields = resolve(input, schemas)
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object);
        for (name, schema) in fields.into_iter().flatten() {
            if name == "tenant" || bound.iter().any(|b| b == name) {
                continue;
            }
            let scalar = resolve(schema, schemas)
                .and_then(|s| s.get("type"))
                .and_then(Value::as_str)
                .is_some_and(|t| t != "object" && t != "array");
            if scalar {
                parameters.push(json!({"name": name, "in": "query", "schema": schema}));
            }
        }
    }
    parameters.push(json!({
        "name": "A2A-Version", "in": "header", "required": true,
        "description": "The A2A protocol version of the request.",
        "schema": {"type": "string", "enum": [crate::PROTOCOL_VERSION]},
    }));
    parameters.push(json!({
        "name": "A2A-Extensions", "in": "header",
        "description": "The URIs of the extensions the client activates, comma-separated.",
        "schema": {"type": "string"},
    }));
    let headers = json!({
        "A2A-Version": {
            "description": "The A2A protocol version of the response.",
            "schema": {"type": "string"},
        },
        "A2A-Extensions": {
            "description": "The URIs of the extensions activated for the request.",
            "schema": {"type": "string"},
        },
    });
    let ok = if streaming {
        // Each event as an object of its fields, its data JSON (as OpenAPI 3.2's `itemSchema`
        // has it, and tools read `schema` of an event stream before 3.2).
        let data = json!({"oneOf": [
            {"$ref": format!("{REF}StreamResponse")},
            {"$ref": format!("{REF}{ERROR}")},
        ]});
        json!({
            "description": format!(
                "Server-sent events: the data of each event is one StreamResponse (ProtoJSON); \
                 a failure after the first event ends the stream with `event: error` and an \
                 {ERROR} as its data."
            ),
            "headers": headers,
            "content": {"text/event-stream": {"schema": {
                "type": "object",
                "required": ["data"],
                "properties": {
                    "id": {"type": "string"},
                    "event": {"type": "string"},
                    "retry": {"type": "integer", "minimum": 0},
                    "data": {
                        "type": "string",
                        "contentMediaType": "application/json",
                        "contentSchema": data,
                    },
                },
            }}},
        })
    } else {
        json!({
            "description": "The result.",
            "headers": headers,
            "content": {A2A_JSON: {"schema": output}},
        })
    };
    let mut op = json!({
        "operationId": id,
        "parameters": parameters,
        "responses": {
            "200": ok,
            "default": {
                "description": "An error (google.rpc.Status in AIP-193 form).",
                "headers": {"A2A-Version": headers["A2A-Version"]},
                "content": {"application/json": {"schema": {"$ref": format!("{REF}{ERROR}")}}},
            },
        },
    });
    if body {
        let schema = body_schema(input, &bound, schemas);
        op["requestBody"] = json!({
            "required": true,
            "content": {A2A_JSON: {"schema": schema}, "application/json": {"schema": schema}},
        });
    }
    Ok(op)
}

/// The body of a POST: the request message, less the fields bound in the path (which win
/// over the body's, so the body need not repeat them).
fn body_schema(input: &Value, bound: &[String], schemas: &Map<String, Value>) -> Value {
    let Some(Value::Object(message)) = resolve(input, schemas) else {
        return input.clone();
    };
    let has = |key: &str, name: &String| match message.get(key) {
        Some(Value::Object(p)) => p.contains_key(name),
        Some(Value::Array(r)) => r.iter().any(|v| v == name),
        _ => false,
    };
    if !bound
        .iter()
        .any(|b| has("properties", b) || has("required", b))
    {
        return input.clone();
    }
    let mut message = message.clone();
    if let Some(Value::Object(p)) = message.get_mut("properties") {
        p.retain(|k, _| !bound.contains(k));
    }
    if let Some(Value::Array(r)) = message.get_mut("required") {
        r.retain(|v| !bound.iter().any(|b| v == b));
        if r.is_empty() {
            message.remove("required");
        }
    }
    Value::Object(message)
}

/// The names of the `{…}` segments of a path template.
fn path_params(template: &str) -> Vec<String> {
    template
        .split('{')
        .skip(1)
        .filter_map(|s| s.split_once('}').map(|(name, _)| name.to_owned()))
        .collect()
}

/// `schema`, or the component it references.
fn resolve<'a>(schema: &'a Value, schemas: &'a Map<String, Value>) -> Option<&'a Value> {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => schemas.get(r.strip_prefix(REF)?),
        None => Some(schema),
    }
}

/// The HTTP+JSON error body: `{"error": {code, status, message, details}}`.
fn error_schema() -> Value {
    json!({
        "type": "object",
        "required": ["error"],
        "properties": {"error": {
            "type": "object",
            "required": ["code", "status", "message"],
            "properties": {
                "code": {"type": "integer", "description": "The HTTP status."},
                "status": {"type": "string", "description": "The google.rpc.Code name."},
                "message": {"type": "string"},
                "details": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["@type"],
                        "properties": {"@type": {"type": "string"}},
                    },
                },
            },
        }},
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn doc() -> Value {
        let card = AgentCard {
            name: "n".into(),
            version: "1".into(),
            ..Default::default()
        };
        build(&card, "/v1").unwrap()
    }

    #[test]
    fn every_route_is_described_plain_and_under_a_tenant() {
        let doc = doc();
        let paths = doc["paths"].as_object().unwrap();
        for (method, path, op) in rest_routes::ROUTES {
            for template in [format!("/v1{path}"), format!("/v1/{{tenant}}{path}")] {
                let described = &paths[&template][method.to_ascii_lowercase()];
                assert!(
                    described["operationId"]
                        .as_str()
                        .unwrap()
                        .starts_with(op.method()),
                    "{method} {template}"
                );
            }
        }
    }

    #[test]
    fn schemas_follow_protojson() {
        let doc = doc();
        let s = &doc["components"]["schemas"];
        assert_eq!(s["Task"]["properties"]["contextId"]["type"], "string");
        assert_eq!(
            s["TaskStatus"]["properties"]["timestamp"]["format"],
            "date-time"
        );
        assert_eq!(s["Part"]["properties"]["raw"]["contentEncoding"], "base64");
        assert_eq!(s["Part"]["properties"]["data"], json!({}));
        assert_eq!(s["Part"]["oneOf"].as_array().unwrap().len(), 4);
        assert!(
            s["TaskState"]["enum"]
                .as_array()
                .unwrap()
                .contains(&json!("TASK_STATE_COMPLETED"))
        );
        assert_eq!(
            s["AgentCard"]["properties"]["securitySchemes"]["additionalProperties"]["$ref"],
            "#/components/schemas/SecurityScheme"
        );
    }

    #[test]
    fn get_takes_the_scalar_fields_from_the_query() {
        let doc = doc();
        let list = &doc["paths"]["/v1/tasks"]["get"]["parameters"];
        let names: Vec<&str> = list
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["in"] == "query")
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert!(names.contains(&"pageSize") && names.contains(&"status"));
        assert!(!names.contains(&"tenant"));
        let stream = &doc["paths"]["/v1/message:stream"]["post"]["responses"]["200"]["content"];
        assert!(stream.get("text/event-stream").is_some());
    }

    #[test]
    fn required_fields_come_from_the_proto_less_those_in_the_path() {
        let doc = doc();
        let s = &doc["components"]["schemas"];
        assert_eq!(
            s["Message"]["required"],
            json!(["messageId", "role", "parts"])
        );
        assert_eq!(s["CancelTaskRequest"]["required"], json!(["id"]));
        let cancel = &doc["paths"]["/v1/tasks/{id}:cancel"]["post"]["requestBody"]["content"];
        let body = &cancel[A2A_JSON]["schema"];
        assert!(body.get("required").is_none(), "{body}");
        assert!(body["properties"].get("id").is_none());
        assert!(body["properties"].get("metadata").is_some());
    }

    #[test]
    fn a_required_field_is_not_at_its_default() {
        let doc = doc();
        let s = &doc["components"]["schemas"];
        let message = &s["Message"]["properties"];
        assert_eq!(message["messageId"]["minLength"], 1);
        assert_eq!(message["parts"]["minItems"], 1);
        assert_eq!(message["role"]["not"], json!({"const": "ROLE_UNSPECIFIED"}));
        assert!(message["contextId"].get("minLength").is_none());
        // The spec's prose keeps these at their default.
        let list = &s["ListTasksResponse"]["properties"];
        assert!(list["nextPageToken"].get("minLength").is_none());
        assert!(list["tasks"].get("minItems").is_none());
        assert!(
            s["AgentCard"]["properties"]["skills"]
                .get("minItems")
                .is_none()
        );
        let raw = s["Part"]["properties"]["raw"]["pattern"].as_str().unwrap();
        assert!(raw.starts_with('^') && raw.ends_with('$') && !raw.contains(' '));
    }
}
