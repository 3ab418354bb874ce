//! `card get`, `config show` and `call`.

use a2a_runtime::types::ProtocolBinding;
use clap::ArgMatches;
use serde_json::{Value, json};

use crate::agent::{self, Capability};
use crate::args::{CallArgs, Global};
use crate::config::{FileValues, SETTINGS};
use crate::failure::{CARD_INVALID, EXIT_FAILURE, Failure};
use crate::render::Renderer;

/// Problems of a card against the A2A schema's required fields (A2A §4.4, `AgentCard`), on the
/// JSON as it came, then the runtime's own validation of the parsed card.
pub(crate) fn card_problems(raw: &Value, card: &a2a_runtime::types::AgentCard) -> Vec<String> {
    let blank = |v: Option<&Value>| v.and_then(Value::as_str).is_none_or(str::is_empty);
    let mut problems = Vec::new();
    let Some(obj) = raw.as_object() else {
        return vec!["the card is not a JSON object".into()];
    };
    for field in ["name", "description", "version"] {
        if blank(obj.get(field)) {
            problems.push(format!("`{field}` must be a non-empty string"));
        }
    }
    if !obj.get("capabilities").is_some_and(Value::is_object) {
        problems.push("`capabilities` must be an object".into());
    }
    for field in ["defaultInputModes", "defaultOutputModes"] {
        if !obj.get(field).is_some_and(Value::is_array) {
            problems.push(format!("`{field}` must be an array of media types"));
        }
    }
    match obj.get("supportedInterfaces").and_then(Value::as_array) {
        Some(list) if !list.is_empty() => {
            for (n, i) in list.iter().enumerate() {
                for field in ["url", "protocolBinding", "protocolVersion"] {
                    if blank(i.get(field)) {
                        problems.push(format!("`supportedInterfaces[{n}].{field}` is required"));
                    }
                }
            }
        }
        _ => problems.push("`supportedInterfaces` must list at least one interface".into()),
    }
    match obj.get("skills").and_then(Value::as_array) {
        Some(skills) => {
            for (n, s) in skills.iter().enumerate() {
                for field in ["id", "name", "description"] {
                    if blank(s.get(field)) {
                        problems.push(format!("`skills[{n}].{field}` is required"));
                    }
                }
                if !s.get("tags").is_some_and(Value::is_array) {
                    problems.push(format!("`skills[{n}].tags` must be an array"));
                }
            }
        }
        None => problems.push("`skills` must be an array".into()),
    }
    if let Err(e) = a2a_runtime::types::Validate::validate(card) {
        problems.push(e.to_string());
    }
    problems
}

/// `card get`.
pub(crate) async fn card_get(
    g: &Global,
    validate: bool,
    extended: bool,
    out: &Renderer,
) -> Result<(), Failure> {
    let resolved = agent::resolve_card(g).await?;
    let mut extra: Vec<(&str, String)> = vec![("Source", resolved.source.clone())];
    extra.push(("Signature", resolved.signature.clone()));
    if out.is_json() {
        eprintln!("a2a: card signature: {}", resolved.signature);
    }
    if validate {
        let problems = card_problems(&resolved.raw, &resolved.card);
        if !problems.is_empty() {
            return Err(Failure::new(
                CARD_INVALID,
                EXIT_FAILURE,
                format!(
                    "the card at {} is invalid: {}",
                    resolved.source,
                    problems.join("; ")
                ),
            ));
        }
        extra.push(("Valid", "yes".into()));
        if out.is_json() {
            eprintln!("a2a: the card at {} is valid", resolved.source);
        }
    }
    let interface = agent::choose(g, &resolved.card).ok();
    if extended {
        agent::require(&resolved.card, Capability::ExtendedCard)?;
        let client = agent::connect(g, &resolved.card).await?;
        let card = client
            .extended_card()
            .await
            .map_err(agent::fail(g))?
            .into_inner();
        extra.push(("Card", "extended".into()));
        out.card(&card, interface.as_ref(), &extra)?;
        return Ok(());
    }
    out.card(&resolved.card, interface.as_ref(), &extra)?;
    Ok(())
}

/// `config show`: each setting's effective value and where it came from.
pub(crate) fn config_show(
    matches: &ArgMatches,
    files: &FileValues,
    out: &Renderer,
) -> Result<(), Failure> {
    let mut settings = serde_json::Map::new();
    let mut fields: Vec<(&str, String)> = Vec::new();
    for s in SETTINGS {
        let raw: Vec<String> = matches
            .get_raw(s.id)
            .map(|v| v.map(|x| x.to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        let value = if raw.is_empty() {
            None
        } else if s.secret {
            Some("<redacted>".to_owned())
        } else {
            Some(raw.join(","))
        };
        let source = if value.is_none() {
            "unset".to_owned()
        } else {
            files.source(matches, s)
        };
        settings.insert(s.var.to_owned(), json!({"value": value, "source": source}));
        fields.push((
            s.var,
            format!("{} [{source}]", value.as_deref().unwrap_or("")),
        ));
    }
    let file_list: Vec<String> = files
        .files
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    if out.is_json() {
        out.json_line(&json!({"settings": settings, "files": file_list}))?;
    } else {
        for f in &file_list {
            fields.push(("File", f.clone()));
        }
        out.fields(&fields)?;
    }
    Ok(())
}

/// `call`: a method an extension adds.
pub(crate) async fn call(g: &Global, args: CallArgs, out: &Renderer) -> Result<(), Failure> {
    let (client, _) = agent::open(g).await?;
    let rest = client.interface().protocol_binding == ProtocolBinding::HttpJson;
    let path = match (&args.path, rest) {
        (Some(p), _) => p.clone(),
        (None, false) => String::new(),
        (None, true) => {
            return Err(Failure::usage(
                "call on HTTP+JSON needs the method's REST path: --path /extensions/…",
            ));
        }
    };
    // One call per process: the names live as long as it does.
    let method: &'static str = Box::leak(args.method.into_boxed_str());
    let path: &'static str = Box::leak(path.into_boxed_str());
    let uri: &'static str = Box::leak(args.uri.into_boxed_str());
    let params = args
        .params
        .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
    let result = client
        .call_raw(
            method,
            path,
            uri,
            params,
            a2a_runtime::client::CallOptions::default(),
        )
        .await
        .map_err(agent::fail(g))?;
    out.value(result.get_ref())?;
    Ok(())
}
