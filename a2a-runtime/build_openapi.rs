//! The JSON Schemas of the HTTP+JSON binding, generated from the proto's descriptor by the
//! ProtoJSON mapping rules (feature `openapi`): lowerCamelCase JSON names, enums as their value
//! names, 64-bit integers as decimal strings, `Timestamp` as an RFC 3339 string, `bytes` as
//! base64, `Struct` as any object and `Value` as any JSON, maps as objects, a oneof as exactly
//! one of its fields present, and the fields marked `(google.api.field_behavior) = REQUIRED` as
//! required and not at their default value.
//!
//! Writes `$OUT_DIR/openapi_parts.json`: `{"schemas": {Name: schema}, "methods": {Rpc: {"input":
//! schema, "output": schema, "streaming": bool}}}`, the parts `src/server/openapi.rs` assembles the document from.

use protox::prost_reflect::{
    DescriptorPool, ExtensionDescriptor, FieldDescriptor, Kind, MessageDescriptor, Value,
};

/// The package of the A2A messages.
const PACKAGE: &str = "lf.a2a.v1";
/// `google.api.FieldBehavior.REQUIRED`.
const REQUIRED: i32 = 2;
/// Where a schema is referenced from.
const REF: &str = "#/components/schemas/";
/// Base64 in either alphabet (not mixed), in whole quanta but the last, padded or not.
const BASE64: &str = "^(?:(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?\
                      |(?:[A-Za-z0-9_-]{4})*(?:[A-Za-z0-9_-]{2}(?:==)?|[A-Za-z0-9_-]{3}=?)?)$";

/// A JSON value, written by [`Json::write`] (the build script has no JSON library).
enum Json {
    Obj(Vec<(String, Json)>),
    Arr(Vec<Json>),
    Str(String),
    Int(i64),
    Bool(bool),
}

impl Json {
    fn obj<const N: usize>(members: [(&str, Json); N]) -> Self {
        Json::Obj(
            members
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        )
    }

    fn str(s: &str) -> Self {
        Json::Str(s.to_owned())
    }

    fn write(&self, out: &mut String) {
        match self {
            Json::Obj(members) => {
                out.push('{');
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    quote(k, out);
                    out.push(':');
                    v.write(out);
                }
                out.push('}');
            }
            Json::Arr(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write(out);
                }
                out.push(']');
            }
            Json::Str(s) => quote(s, out),
            Json::Int(n) => out.push_str(&n.to_string()),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        }
    }
}

fn quote(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Writes `$OUT_DIR/openapi_parts.json`.
pub(crate) fn write(pool: &DescriptorPool) {
    let behavior = pool.get_extension_by_name("google.api.field_behavior");
    let mut schemas = Vec::new();
    for message in pool.all_messages() {
        if message.package_name() == PACKAGE && !message.is_map_entry() {
            let schema = message_schema(&message, behavior.as_ref());
            schemas.push((message.name().to_owned(), schema));
        }
    }
    for e in pool.all_enums() {
        if e.package_name() == PACKAGE {
            let names = e.values().map(|v| Json::str(v.name())).collect();
            let schema = Json::obj([("type", Json::str("string")), ("enum", Json::Arr(names))]);
            schemas.push((e.name().to_owned(), schema));
        }
    }
    let mut methods = Vec::new();
    for service in pool.services() {
        if service.package_name() != PACKAGE {
            continue;
        }
        for m in service.methods() {
            let schema = |d: MessageDescriptor| kind_schema(&Kind::Message(d));
            let method = Json::obj([
                ("input", schema(m.input())),
                ("output", schema(m.output())),
                ("streaming", Json::Bool(m.is_server_streaming())),
            ]);
            methods.push((m.name().to_owned(), method));
        }
    }
    let doc = Json::obj([
        ("schemas", Json::Obj(schemas)),
        ("methods", Json::Obj(methods)),
    ]);
    let mut text = String::new();
    doc.write(&mut text);
    let Some(dir) = std::env::var_os("OUT_DIR") else {
        panic!("OUT_DIR is not set");
    };
    let path = std::path::Path::new(&dir).join("openapi_parts.json");
    if let Err(e) = std::fs::write(&path, text) {
        panic!("cannot write {}: {e}", path.display());
    }
}

/// An object with one property per field; each real oneof adds "exactly one of its fields".
fn message_schema(message: &MessageDescriptor, behavior: Option<&ExtensionDescriptor>) -> Json {
    let properties = message
        .fields()
        .map(|f| {
            let schema = field_schema(&f);
            let schema = if behavior.is_some_and(|b| is_required(&f, b)) {
                set(&f, schema)
            } else {
                schema
            };
            (f.json_name().to_owned(), schema)
        })
        .collect();
    let mut members = vec![
        ("type".to_owned(), Json::str("object")),
        ("properties".to_owned(), Json::Obj(properties)),
    ];
    let required: Vec<Json> = message
        .fields()
        .filter(|f| behavior.is_some_and(|b| is_required(f, b)))
        .map(|f| Json::str(f.json_name()))
        .collect();
    if !required.is_empty() {
        members.push(("required".to_owned(), Json::Arr(required)));
    }
    let oneofs: Vec<Json> = message
        .oneofs()
        .filter(|o| !o.is_synthetic())
        .map(|o| {
            let one = o
                .fields()
                .map(|f| Json::obj([("required", Json::Arr(vec![Json::str(f.json_name())]))]))
                .collect();
            Json::Arr(one)
        })
        .collect();
    match oneofs.len() {
        0 => {}
        1 => {
            if let Some(one) = oneofs.into_iter().next() {
                members.push(("oneOf".to_owned(), one));
            }
        }
        _ => {
            let all = oneofs
                .into_iter()
                .map(|one| Json::obj([("oneOf", one)]))
                .collect();
            members.push(("allOf".to_owned(), Json::Arr(all)));
        }
    }
    Json::Obj(members)
}

/// Whether `field` is marked `(google.api.field_behavior) = REQUIRED`.
fn is_required(field: &FieldDescriptor, behavior: &ExtensionDescriptor) -> bool {
    let options = field.options();
    if !options.has_extension(behavior) {
        return false;
    }
    match &*options.get_extension(behavior) {
        Value::List(values) => values
            .iter()
            .any(|v| matches!(v, Value::EnumNumber(REQUIRED))),
        Value::EnumNumber(n) => *n == REQUIRED,
        _ => false,
    }
}

/// The REQUIRED fields whose default value is still a value, as the spec's prose has it: the
/// last page of ListTasks has `"nextPageToken": ""` (§3.1.4) and an empty page `"tasks": []`,
/// and a card may list no skills (§8.4.1 keeps `"skills": []`).
const DEFAULT_IS_SET: &[&str] = &[
    "lf.a2a.v1.ListTasksResponse.tasks",
    "lf.a2a.v1.ListTasksResponse.next_page_token",
    "lf.a2a.v1.AgentCard.skills",
];

/// The schema of a REQUIRED `field`, less its default value: a proto3 field without presence
/// that holds its default is not set (ProtoJSON omits it), so a REQUIRED string is not empty, a
/// REQUIRED enum is not its zero value and a REQUIRED repeated field has an element (§5.7).
/// Numbers, booleans, maps and message fields (which have presence) are left as they are.
fn set(field: &FieldDescriptor, schema: Json) -> Json {
    let Json::Obj(mut members) = schema else {
        return schema;
    };
    if DEFAULT_IS_SET.contains(&field.full_name()) || field.is_map() {
        return Json::Obj(members);
    }
    if field.is_list() {
        members.push(("minItems".to_owned(), Json::Int(1)));
        return Json::Obj(members);
    }
    if field.supports_presence() {
        return Json::Obj(members);
    }
    match field.kind() {
        Kind::String => members.push(("minLength".to_owned(), Json::Int(1))),
        Kind::Enum(e) => {
            if let Some(zero) = e.values().find(|v| v.number() == 0) {
                let not = Json::obj([("const", Json::str(zero.name()))]);
                members.push(("not".to_owned(), not));
            }
        }
        _ => {}
    }
    Json::Obj(members)
}

fn field_schema(field: &FieldDescriptor) -> Json {
    let schema = if field.is_map() {
        let value = match field.kind() {
            Kind::Message(entry) => kind_schema(&entry.map_entry_value_field().kind()),
            other => kind_schema(&other),
        };
        Json::obj([
            ("type", Json::str("object")),
            ("additionalProperties", value),
        ])
    } else if field.is_list() {
        Json::obj([
            ("type", Json::str("array")),
            ("items", kind_schema(&field.kind())),
        ])
    } else {
        kind_schema(&field.kind())
    };
    let deprecated = field
        .field_descriptor_proto()
        .options
        .as_ref()
        .and_then(|o| o.deprecated)
        .unwrap_or(false);
    match schema {
        // Keywords beside `$ref` apply too in OpenAPI 3.1 (JSON Schema 2020-12).
        Json::Obj(mut members) if deprecated => {
            members.push(("deprecated".to_owned(), Json::Bool(true)));
            Json::Obj(members)
        }
        schema => schema,
    }
}

/// The schema of one value of a field of `kind`.
fn kind_schema(kind: &Kind) -> Json {
    let typed = |t: &str| Json::obj([("type", Json::str(t))]);
    let int32 = |min: i64, max: i64| {
        Json::obj([
            ("type", Json::str("integer")),
            ("minimum", Json::Int(min)),
            ("maximum", Json::Int(max)),
        ])
    };
    match kind {
        Kind::Double | Kind::Float => typed("number"),
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => {
            int32(i64::from(i32::MIN), i64::from(i32::MAX))
        }
        Kind::Uint32 | Kind::Fixed32 => int32(0, i64::from(u32::MAX)),
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => Json::obj([
            ("type", Json::str("string")),
            ("format", Json::str("int64")),
            ("pattern", Json::str("^-?[0-9]{1,19}$")),
        ]),
        Kind::Uint64 | Kind::Fixed64 => Json::obj([
            ("type", Json::str("string")),
            ("format", Json::str("uint64")),
            ("pattern", Json::str("^[0-9]{1,20}$")),
        ]),
        Kind::Bool => typed("boolean"),
        Kind::String => typed("string"),
        // `contentEncoding` alone only annotates; the pattern is what ProtoJSON parsers accept:
        // standard or URL-safe base64, padded or not.
        Kind::Bytes => Json::obj([
            ("type", Json::str("string")),
            ("contentEncoding", Json::str("base64")),
            ("pattern", Json::str(BASE64)),
        ]),
        Kind::Enum(e) if e.full_name() == "google.protobuf.NullValue" => typed("null"),
        Kind::Enum(e) => Json::obj([("$ref", Json::Str(format!("{REF}{}", e.name())))]),
        Kind::Message(m) => match m.full_name() {
            "google.protobuf.Timestamp" => Json::obj([
                ("type", Json::str("string")),
                ("format", Json::str("date-time")),
            ]),
            "google.protobuf.Duration" => Json::obj([
                ("type", Json::str("string")),
                ("pattern", Json::str("^-?[0-9]+(\\.[0-9]{1,9})?s$")),
            ]),
            "google.protobuf.Struct" | "google.protobuf.Empty" => typed("object"),
            "google.protobuf.ListValue" => typed("array"),
            // Any JSON value.
            "google.protobuf.Value" => Json::Obj(Vec::new()),
            _ if m.package_name() == PACKAGE => {
                Json::obj([("$ref", Json::Str(format!("{REF}{}", m.name())))])
            }
            // A well-known type without a mapping here: any JSON value.
            _ => Json::Obj(Vec::new()),
        },
    }
}
