//! `chat` (SPEC.md §6.2, Tier 3): turns read line by line, each sent as a blocking `send`,
//! carrying the context across turns and the task while it waits for the caller. On a terminal
//! it prompts on stderr; otherwise it reads the turns from stdin without prompting (a script's
//! chat), and with stdout redirected it never waits on a terminal for input.

use std::io::{IsTerminal as _, Write as _};

use a2a_runtime::types::{Message, Part, Role, SendMessageResponse};
use tokio::io::AsyncBufReadExt as _;

use crate::agent;
use crate::args::{Global, SendArgs};
use crate::failure::Failure;
use crate::render::Renderer;
use crate::send;
use crate::wait::{self, Waiter};

/// Runs `chat` until end of input or `/quit`.
pub(crate) async fn run(g: &Global, out: &Renderer) -> Result<(), Failure> {
    let interactive = std::io::stdin().is_terminal();
    if interactive && !std::io::stdout().is_terminal() {
        return Err(Failure::usage(
            "chat with stdout redirected reads its turns from stdin, not from a terminal",
        )
        .hint("printf 'hello\\n' | a2a chat > out.txt"));
    }
    let (client, card) = agent::open(g).await?;
    let mut context: Option<String> = None;
    let mut task: Option<String> = None;
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    loop {
        if interactive {
            eprint!("you> ");
            let _ = std::io::stderr().flush();
        }
        let Some(line) = lines
            .next_line()
            .await
            .map_err(|e| Failure::internal(format!("could not read stdin: {e}")))?
        else {
            break;
        };
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        if matches!(text, "/quit" | "/exit") {
            break;
        }
        let args = SendArgs {
            message: Some(text.to_owned()),
            text: Vec::new(),
            file: Vec::new(),
            data: Vec::new(),
            media_type: Vec::new(),
            // An interrupted task continues; otherwise a new task in the same context.
            task_id: task.clone(),
            context_id: if task.is_some() {
                None
            } else {
                context.clone()
            },
            metadata: None,
            history: None,
        };
        let message = Message::new(Role::User, vec![Part::text(text)]);
        let waiter = Waiter::new(g.timeout);
        let result = send::blocking(g, &client, &card, message, &args, &waiter).await?;
        match &result {
            SendMessageResponse::Task(t) => {
                context = Some(t.context_id.to_string());
                task = t.status.state.is_interrupted().then(|| t.id.to_string());
                if out.is_json() {
                    out.json_line(&result)?;
                } else {
                    out.task(t)?;
                }
                wait::warn_outcome(t.status.state);
            }
            SendMessageResponse::Message(m) => {
                if !m.context_id.as_str().is_empty() {
                    context = Some(m.context_id.to_string());
                }
                if out.is_json() {
                    out.json_line(&result)?;
                } else {
                    out.message(m)?;
                }
            }
        }
        if !out.is_json() {
            println!();
        }
    }
    Ok(())
}
