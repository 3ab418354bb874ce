//! `send` (SPEC.md §8.2): the message built from ordered part flags, then a blocking wait (the
//! stream when the card declares streaming, polling otherwise and when the stream fails),
//! `--async`, or `--stream`.

use std::io::Read as _;

use a2a_runtime::client::{A2aClient, ClientError, SendOptions};
use a2a_runtime::types::{
    AgentCard, Message, Part, Role, SendMessageConfiguration, SendMessageResponse, StreamResponse,
    Task,
};
use clap::ArgMatches;
use futures::StreamExt as _;

use crate::agent::{self, Capability};
use crate::args::{Global, SendArgs};
use crate::failure::{EXIT_FAILURE, Failure};
use crate::render::Renderer;
use crate::wait::{self, Known, Waiter};

/// One part flag as given, at its position on the command line.
enum PartFlag<'a> {
    Text(&'a str),
    File(&'a str),
    Data(&'a str),
}

/// The message's parts in command-line order, each `--media-type` bound to the part flag
/// just before it.
pub(crate) fn build_message(args: &SendArgs, m: &ArgMatches) -> Result<Message, Failure> {
    let at =
        |id: &str| -> Vec<usize> { m.indices_of(id).map(Iterator::collect).unwrap_or_default() };
    let mut flags: Vec<(usize, PartFlag<'_>)> = Vec::new();
    if let (Some(text), Some(i)) = (&args.message, at("message").first()) {
        flags.push((*i, PartFlag::Text(text)));
    }
    flags.extend(
        at("text")
            .into_iter()
            .zip(&args.text)
            .map(|(i, v)| (i, PartFlag::Text(v))),
    );
    flags.extend(
        at("file")
            .into_iter()
            .zip(&args.file)
            .map(|(i, v)| (i, PartFlag::File(v))),
    );
    flags.extend(
        at("data")
            .into_iter()
            .zip(&args.data)
            .map(|(i, v)| (i, PartFlag::Data(v))),
    );
    flags.sort_by_key(|(i, _)| *i);
    if flags.is_empty() {
        return Err(Failure::usage(
            "nothing to send: give the text, or --text / --file / --data",
        ));
    }
    let mut parts: Vec<(usize, Part, bool)> = Vec::new();
    for (i, flag) in &flags {
        let part = match flag {
            PartFlag::Text(t) => Part::text(*t),
            PartFlag::File(f) => file_part(f)?,
            PartFlag::Data(d) => Part::data(data_value(d)?),
        };
        parts.push((*i, part, false));
    }
    for (mi, media) in at("media_type").into_iter().zip(&args.media_type) {
        let Some(target) = parts.iter_mut().rev().find(|(i, _, _)| *i < mi) else {
            return Err(Failure::usage(format!(
                "--media-type {media} must follow the --text, --file or --data it describes"
            )));
        };
        if target.2 {
            return Err(Failure::usage(format!(
                "--media-type {media}: the part before it already has a media type"
            )));
        }
        target.1.media_type.clone_from(media);
        target.2 = true;
    }
    let parts: Vec<Part> = parts
        .into_iter()
        .map(|(_, mut p, explicit)| {
            if !explicit && p.media_type.is_empty() && !p.filename.is_empty() {
                p.media_type = infer_media_type(&p.filename).to_owned();
            }
            p
        })
        .collect();
    let mut message = Message::new(Role::User, parts);
    if let Some(metadata) = &args.metadata {
        message.metadata = metadata.clone();
    }
    Ok(message)
}

fn file_part(f: &str) -> Result<Part, Failure> {
    let name = f.rsplit('/').next().unwrap_or(f).to_owned();
    if f.starts_with("http://") || f.starts_with("https://") {
        // A reference the agent fetches: never downloaded or re-hosted here.
        return Ok(Part::url(f).with_filename(name));
    }
    let bytes = std::fs::read(f)
        .map_err(|e| Failure::usage(format!("--file {f}: could not read it: {e}")))?;
    Ok(Part::raw(bytes).with_filename(name))
}

fn data_value(d: &str) -> Result<serde_json::Value, Failure> {
    let text = if d == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| Failure::usage(format!("--data -: could not read stdin: {e}")))?;
        s
    } else if std::path::Path::new(d).is_file() {
        std::fs::read_to_string(d)
            .map_err(|e| Failure::usage(format!("--data {d}: could not read it: {e}")))?
    } else {
        // Not a file: inline JSON.
        d.to_owned()
    };
    serde_json::from_str(&text).map_err(|e| Failure::usage(format!("--data {d}: not JSON: {e}")))
}

/// A media type from a file name's extension, only when the caller gave none.
fn infer_media_type(name: &str) -> &'static str {
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("txt") => "text/plain",
        Some("md") => "text/markdown",
        Some("csv") => "text/csv",
        Some("html" | "htm") => "text/html",
        Some("json") => "application/json",
        Some("pdf") => "application/pdf",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("svg") => "image/svg+xml",
        Some("xml") => "application/xml",
        Some("zip") => "application/zip",
        _ => "application/octet-stream",
    }
}

fn options(args: &SendArgs, return_immediately: bool) -> SendOptions {
    SendOptions {
        task_id: args.task_id.clone(),
        context_id: args.context_id.clone(),
        configuration: return_immediately.then(|| SendMessageConfiguration {
            return_immediately: true,
            ..SendMessageConfiguration::default()
        }),
        history_length: args.history,
        ..SendOptions::default()
    }
}

/// Runs `send`.
pub(crate) async fn run(
    g: &Global,
    args: &SendArgs,
    matches: &ArgMatches,
    out: &mut Renderer,
) -> Result<(), Failure> {
    let message = build_message(args, matches)?;
    let (client, card) = agent::open(g).await?;
    agent::debug_json(g, "send message", &message);
    let waiter = Waiter::new(g.timeout);
    if g.stream {
        if agent::require(&card, Capability::Streaming).is_ok() {
            return stream(g, &client, message, args, &waiter, out).await;
        }
        eprintln!(
            "a2a: warning: agent {} does not declare streaming; waiting by polling instead",
            card.name
        );
        let result = blocking(g, &client, &card, message, args, &waiter).await?;
        let event = match result {
            SendMessageResponse::Task(t) => StreamResponse::Task(t),
            SendMessageResponse::Message(m) => StreamResponse::Message(m),
        };
        return Ok(out.event(&event)?);
    }
    if g.no_wait {
        let sent = waiter
            .run(client.send_message(message, options(args, true)))
            .await
            .map_err(|s| wait::stopped(s, None))?
            .map_err(agent::fail(g))?
            .into_inner();
        agent::debug_json(g, "answer", &sent);
        return print(out, &sent);
    }
    let result = blocking(g, &client, &card, message, args, &waiter).await?;
    print(out, &result)
}

fn print(out: &Renderer, result: &SendMessageResponse) -> Result<(), Failure> {
    if out.is_json() {
        out.json_line(result)?;
    } else {
        match result {
            SendMessageResponse::Task(t) => out.task(t)?,
            SendMessageResponse::Message(m) => out.message(m)?,
        }
    }
    if let SendMessageResponse::Task(t) = result {
        wait::warn_outcome(t.status.state);
    }
    Ok(())
}

/// Sends and waits for a terminal or interrupted state: over the stream when the card
/// declares streaming (polling if the stream fails once the task is known), else by polling.
pub(crate) async fn blocking(
    g: &Global,
    client: &A2aClient,
    card: &AgentCard,
    message: Message,
    args: &SendArgs,
    waiter: &Waiter,
) -> Result<SendMessageResponse, Failure> {
    let mut known: Option<Known> = None;
    if card.capabilities.streaming == Some(true) {
        let mut events = waiter
            .run(client.stream_message(message, options(args, false)))
            .await
            .map_err(|s| wait::stopped(s, None))?
            .map_err(agent::fail(g))?
            .into_inner();
        loop {
            let next = waiter
                .run(events.next())
                .await
                .map_err(|s| wait::stopped(s, known.as_ref()))?;
            match next {
                None => break,
                Some(Ok(event)) => {
                    agent::debug_json(g, "event", &event);
                    let first = known.is_none();
                    match &event {
                        StreamResponse::Message(m) if known.is_none() => {
                            return Ok(SendMessageResponse::Message(m.clone()));
                        }
                        StreamResponse::Task(t) => known = Some(Known::of(t)),
                        StreamResponse::StatusUpdate(u) => {
                            known = Some(Known {
                                task_id: u.task_id.to_string(),
                                context_id: u.context_id.to_string(),
                                state: u.status.state,
                            });
                        }
                        _ => {}
                    }
                    // A continued task's first snapshot can still show the interruption this
                    // message answers: only a later event says where the task went.
                    let stale = args.task_id.is_some()
                        && first
                        && matches!(&event, StreamResponse::Task(t) if t.status.state.is_interrupted());
                    if let Some(k) = &known {
                        if wait::is_settled(k.state) && !stale {
                            break;
                        }
                        if first {
                            wait::announce(k);
                        }
                    }
                }
                Some(Err(e)) => {
                    if known.is_some() && !matches!(e, ClientError::Agent(_)) {
                        eprintln!(
                            "a2a: warning: the stream failed ({e}); polling the task instead"
                        );
                        break;
                    }
                    return Err(agent::fail(g)(e));
                }
            }
        }
        let Some(k) = known else {
            return Err(Failure::new(
                "InvalidAgentResponseError",
                EXIT_FAILURE,
                "the stream ended before the agent sent a task or a message",
            ));
        };
        let task = final_task(g, client, waiter, &k.task_id, args.history, Some(k.clone())).await?;
        return Ok(SendMessageResponse::Task(task));
    }
    let sent = waiter
        .run(client.send_message(message, options(args, true)))
        .await
        .map_err(|s| wait::stopped(s, None))?
        .map_err(agent::fail(g))?
        .into_inner();
    agent::debug_json(g, "answer", &sent);
    match sent {
        SendMessageResponse::Message(m) => Ok(SendMessageResponse::Message(m)),
        SendMessageResponse::Task(t) if wait::is_settled(t.status.state) => {
            Ok(SendMessageResponse::Task(t))
        }
        SendMessageResponse::Task(t) => {
            let k = Known::of(&t);
            wait::announce(&k);
            let task =
                final_task(g, client, waiter, &k.task_id, args.history, Some(k.clone())).await?;
            Ok(SendMessageResponse::Task(task))
        }
    }
}

async fn final_task(
    g: &Global,
    client: &A2aClient,
    waiter: &Waiter,
    task_id: &str,
    history: Option<i32>,
    known: Option<Known>,
) -> Result<Task, Failure> {
    wait::poll(g, client, waiter, task_id, history, known).await
}

/// `send --stream`: every event as it arrives.
async fn stream(
    g: &Global,
    client: &A2aClient,
    message: Message,
    args: &SendArgs,
    waiter: &Waiter,
    out: &mut Renderer,
) -> Result<(), Failure> {
    let mut events = waiter
        .run(client.stream_message(message, options(args, false)))
        .await
        .map_err(|s| wait::stopped(s, None))?
        .map_err(agent::fail(g))?
        .into_inner();
    follow(g, &mut events, waiter, out).await
}

/// Prints a stream's events until it ends; a failure after some events carries the task.
pub(crate) async fn follow(
    g: &Global,
    events: &mut a2a_runtime::client::ClientStream,
    waiter: &Waiter,
    out: &mut Renderer,
) -> Result<(), Failure> {
    let mut known: Option<Known> = None;
    loop {
        let next = waiter
            .run(events.next())
            .await
            .map_err(|s| wait::stopped(s, known.as_ref()))?;
        match next {
            None => break,
            Some(Ok(event)) => {
                agent::debug_json(g, "event", &event);
                match &event {
                    StreamResponse::Task(t) => known = Some(Known::of(t)),
                    StreamResponse::StatusUpdate(u) => {
                        known = Some(Known {
                            task_id: u.task_id.to_string(),
                            context_id: u.context_id.to_string(),
                            state: u.status.state,
                        });
                    }
                    _ => {}
                }
                out.event(&event)?;
            }
            Some(Err(e)) => {
                let mut f = agent::fail(g)(e);
                if let Some(k) = &known
                    && f.hint.is_none()
                {
                    f = f.hint(format!("a2a task subscribe {}", k.task_id));
                }
                return Err(f);
            }
        }
    }
    if let Some(k) = known {
        wait::warn_outcome(k.state);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_are_inferred_from_names() {
        assert_eq!(infer_media_type("a.PDF"), "application/pdf");
        assert_eq!(infer_media_type("notes.txt"), "text/plain");
        assert_eq!(infer_media_type("blob"), "application/octet-stream");
    }
}
