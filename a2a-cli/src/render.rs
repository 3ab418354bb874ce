//! Output: human-readable text, or one JSON document per line (`--json`).

use std::collections::HashMap;
use std::io::{self, Write as _};
use std::time::Duration;

use a2a_runtime::types::{
    AgentCard, AgentInterface, Artifact, ListTasksResponse, Message, Part, PartContent,
    SendMessageResponse, StreamResponse, Task, TaskPushNotificationConfig, TaskState,
};
use serde::Serialize;

/// Writes what the commands print, flushing after each piece so that a stream shows as it
/// arrives.
#[derive(Debug)]
pub(crate) struct Renderer {
    json: bool,
    /// Text of each streamed artifact so far, by artifact id (assembled from its chunks).
    artifacts: HashMap<String, String>,
    /// The artifact whose chunks are being printed on the current line.
    open_artifact: Option<String>,
    /// The last state seen on a stream.
    state: Option<TaskState>,
}

/// A task state as people write it: `completed`, `input-required`.
fn state_name(s: TaskState) -> String {
    s.as_str()
        .trim_start_matches("TASK_STATE_")
        .to_ascii_lowercase()
        .replace('_', "-")
}

fn part_text(p: &Part) -> String {
    match &p.content {
        PartContent::Text(t) => t.clone(),
        PartContent::Data(v) => v.to_string(),
        PartContent::Url(u) => format!("<{u}>"),
        PartContent::Raw(b) => format!("<{} bytes{}>", b.0.len(), media(p)),
        PartContent::Missing | PartContent::Conflicting(_) => "<invalid part>".into(),
    }
}

fn media(p: &Part) -> String {
    if p.media_type.is_empty() {
        String::new()
    } else {
        format!(" of {}", p.media_type)
    }
}

fn parts_text(parts: &[Part]) -> String {
    parts.iter().map(part_text).collect::<Vec<_>>().join("")
}

fn artifact_label(a: &Artifact) -> String {
    if a.name.is_empty() {
        a.artifact_id.to_string()
    } else {
        a.name.clone()
    }
}

fn yes(b: Option<bool>) -> &'static str {
    if b.unwrap_or(false) { "yes" } else { "no" }
}

fn stdout() -> io::StdoutLock<'static> {
    io::stdout().lock()
}

/// Clears the progress line (stderr).
pub(crate) fn clear_progress() {
    let mut e = io::stderr().lock();
    let _ = write!(e, "\r\x1b[2K");
    let _ = e.flush();
}

/// Draws the progress line (stderr): a spinner, the time waited and the task's state.
pub(crate) fn progress(frame: usize, waited: Duration, state: Option<TaskState>) {
    const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
    let state = state
        .map(|s| format!(" ({})", state_name(s)))
        .unwrap_or_default();
    let mut e = io::stderr().lock();
    let _ = write!(
        e,
        "\r\x1b[2K{} waiting for the agent{state} {:.1}s",
        SPINNER[frame % SPINNER.len()],
        waited.as_secs_f64()
    );
    let _ = e.flush();
}

impl Renderer {
    pub(crate) fn new(json: bool) -> Self {
        Self {
            json,
            artifacts: HashMap::new(),
            open_artifact: None,
            state: None,
        }
    }

    pub(crate) fn is_json(&self) -> bool {
        self.json
    }

    /// The state the stream's task was last seen in.
    pub(crate) fn waiting_on(&self) -> Option<TaskState> {
        self.state
    }

    fn line<T: Serialize>(&self, value: &T) -> io::Result<()> {
        let text = serde_json::to_string(value).map_err(io::Error::other)?;
        let mut out = stdout();
        writeln!(out, "{text}")?;
        out.flush()
    }

    fn text(&self, text: &str) -> io::Result<()> {
        let mut out = stdout();
        writeln!(out, "{text}")?;
        out.flush()
    }

    pub(crate) fn value(&self, value: &serde_json::Value) -> io::Result<()> {
        if self.json {
            return self.line(value);
        }
        let pretty = serde_json::to_string_pretty(value).map_err(io::Error::other)?;
        self.text(&pretty)
    }

    pub(crate) fn card(&self, card: &AgentCard, in_use: &AgentInterface) -> io::Result<()> {
        if self.json {
            return self.line(card);
        }
        let mut s = String::new();
        let mut put = |l: String| {
            s.push_str(&l);
            s.push('\n');
        };
        put(format!("{} {}", card.name, card.version));
        if !card.description.is_empty() {
            put(format!("  {}", card.description));
        }
        if let Some(p) = &card.provider {
            put(format!("  provider: {} ({})", p.organization, p.url));
        }
        if let Some(d) = &card.documentation_url {
            put(format!("  documentation: {d}"));
        }
        put("Interfaces:".into());
        for i in &card.supported_interfaces {
            let mark = if i == in_use { "*" } else { " " };
            let version = if i.protocol_version.is_empty() {
                String::new()
            } else {
                format!("  A2A {}", i.protocol_version)
            };
            let tenant = if i.tenant.is_empty() {
                String::new()
            } else {
                format!("  tenant {}", i.tenant)
            };
            put(format!(
                "  {mark} {:<10} {}{version}{tenant}",
                i.protocol_binding.to_string(),
                i.url
            ));
        }
        let c = &card.capabilities;
        put(format!(
            "Capabilities: streaming {}, push notifications {}, extended card {}",
            yes(c.streaming),
            yes(c.push_notifications),
            yes(c.extended_agent_card)
        ));
        if !c.extensions.is_empty() {
            put("Extensions:".into());
            for e in &c.extensions {
                let required = if e.required { " (required)" } else { "" };
                put(format!("  {}{required}", e.uri));
                if !e.description.is_empty() {
                    put(format!("    {}", e.description));
                }
                if !e.params.0.is_empty() {
                    let params =
                        serde_json::to_string_pretty(&e.params).map_err(io::Error::other)?;
                    let params = params.replace('\n', "\n      ");
                    put(format!("    params: {params}"));
                }
            }
        }
        if !card.skills.is_empty() {
            put("Skills:".into());
            for k in &card.skills {
                let description = if k.description.is_empty() {
                    String::new()
                } else {
                    format!(": {}", k.description)
                };
                put(format!("  {} ({}){description}", k.name, k.id));
                if !k.tags.is_empty() {
                    put(format!("    tags: {}", k.tags.join(", ")));
                }
                for example in &k.examples {
                    put(format!("    e.g. {example}"));
                }
            }
        }
        if !card.default_input_modes.is_empty() || !card.default_output_modes.is_empty() {
            put(format!(
                "Modes: in {}; out {}",
                card.default_input_modes.join(", "),
                card.default_output_modes.join(", ")
            ));
        }
        if !card.security_schemes.is_empty() {
            let names: Vec<&str> = card.security_schemes.keys().map(String::as_str).collect();
            put(format!("Security schemes: {}", names.join(", ")));
        }
        let mut out = stdout();
        out.write_all(s.as_bytes())?;
        out.flush()
    }

    fn task_text(task: &Task) -> String {
        let mut s = format!("task {}  {}\n", task.id, state_name(task.status.state));
        s.push_str(&format!("  context: {}\n", task.context_id));
        if let Some(t) = &task.status.timestamp {
            s.push_str(&format!("  updated: {t}\n"));
        }
        if let Some(m) = &task.status.message {
            s.push_str(&format!("  status: {}\n", parts_text(&m.parts)));
        }
        for a in &task.artifacts {
            s.push_str(&format!(
                "  artifact {}: {}\n",
                artifact_label(a),
                parts_text(&a.parts)
            ));
        }
        if !task.history.is_empty() {
            s.push_str(&format!("  history: {} message(s)\n", task.history.len()));
        }
        s
    }

    pub(crate) fn task(&self, task: &Task) -> io::Result<()> {
        if self.json {
            return self.line(task);
        }
        let mut out = stdout();
        out.write_all(Self::task_text(task).as_bytes())?;
        out.flush()
    }

    /// SendMessage's result (`--json`: `{"task": …}` or `{"message": …}`, as on the wire).
    pub(crate) fn sent(&self, result: &SendMessageResponse) -> io::Result<()> {
        if self.json {
            return self.line(result);
        }
        match result {
            SendMessageResponse::Task(task) => self.task(task),
            SendMessageResponse::Message(m) => self.message(m),
        }
    }

    pub(crate) fn message(&self, m: &Message) -> io::Result<()> {
        if self.json {
            return self.line(m);
        }
        self.text(&format!("{}: {}", role(m), parts_text(&m.parts)))
    }

    pub(crate) fn task_row(&self, t: &Task) -> io::Result<()> {
        if self.json {
            return self.line(t);
        }
        let updated = t
            .status
            .timestamp
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default();
        self.text(&format!(
            "{}  {:<14}  {}  {updated}",
            t.id,
            state_name(t.status.state),
            t.context_id
        ))
    }

    pub(crate) fn page(&self, page: &ListTasksResponse) -> io::Result<()> {
        if self.json {
            return self.line(page);
        }
        for t in &page.tasks {
            self.task_row(t)?;
        }
        let mut footer = format!("{} of {} task(s)", page.tasks.len(), page.total_size);
        if !page.next_page_token.is_empty() {
            footer.push_str(&format!(
                "; next page: --page-token {}",
                page.next_page_token
            ));
        }
        self.text(&footer)
    }

    pub(crate) fn push_config(&self, c: &TaskPushNotificationConfig) -> io::Result<()> {
        if self.json {
            return self.line(c);
        }
        let token = if c.token.is_empty() {
            ""
        } else {
            "  (with token)"
        };
        self.text(&format!(
            "push config {} of task {}: {}{token}",
            c.id, c.task_id, c.url
        ))
    }

    pub(crate) fn push_configs(&self, configs: &[TaskPushNotificationConfig]) -> io::Result<()> {
        if self.json {
            return self.line(&configs);
        }
        if configs.is_empty() {
            return self.text("no push configs");
        }
        configs.iter().try_for_each(|c| self.push_config(c))
    }

    pub(crate) fn deleted(&self, task_id: &str, id: &str) -> io::Result<()> {
        if self.json {
            return self.line(&serde_json::json!({"deleted": {"taskId": task_id, "id": id}}));
        }
        self.text(&format!("deleted push config {id} of task {task_id}"))
    }

    /// Ends the line of an artifact being streamed.
    fn close_artifact(&mut self, out: &mut impl io::Write) -> io::Result<()> {
        if self.open_artifact.take().is_some() {
            writeln!(out)?;
        }
        Ok(())
    }

    /// One streamed event: a line per task or status change, artifact chunks appended as
    /// they come (`--json`: the event as one line).
    pub(crate) fn event(&mut self, event: &StreamResponse) -> io::Result<()> {
        match event {
            StreamResponse::Task(t) => self.state = Some(t.status.state),
            StreamResponse::StatusUpdate(u) => self.state = Some(u.status.state),
            _ => {}
        }
        if self.json {
            return self.line(event);
        }
        let mut out = stdout();
        match event {
            StreamResponse::Task(t) => {
                self.close_artifact(&mut out)?;
                writeln!(
                    out,
                    "task {} (context {}): {}",
                    t.id,
                    t.context_id,
                    state_name(t.status.state)
                )?;
            }
            StreamResponse::StatusUpdate(u) => {
                self.close_artifact(&mut out)?;
                let text = u
                    .status
                    .message
                    .as_ref()
                    .map(|m| format!(": {}", parts_text(&m.parts)))
                    .unwrap_or_default();
                writeln!(out, "[{}]{text}", state_name(u.status.state))?;
            }
            StreamResponse::ArtifactUpdate(a) => {
                let id = a.artifact.artifact_id.to_string();
                let chunk = parts_text(&a.artifact.parts);
                if self.open_artifact.as_deref() != Some(id.as_str()) {
                    self.close_artifact(&mut out)?;
                    write!(out, "artifact {}: ", artifact_label(&a.artifact))?;
                    if a.append
                        && let Some(before) = self.artifacts.get(&id)
                    {
                        write!(out, "{before}")?;
                    }
                    self.open_artifact = Some(id.clone());
                }
                let text = self.artifacts.entry(id).or_default();
                if !a.append {
                    text.clear();
                }
                text.push_str(&chunk);
                write!(out, "{chunk}")?;
                if a.last_chunk {
                    self.close_artifact(&mut out)?;
                }
            }
            StreamResponse::Message(m) => {
                self.close_artifact(&mut out)?;
                writeln!(out, "{}: {}", role(m), parts_text(&m.parts))?;
            }
        }
        out.flush()
    }

    /// After the last event: ends an open artifact line.
    pub(crate) fn finish_stream(&mut self) -> io::Result<()> {
        let mut out = stdout();
        self.close_artifact(&mut out)?;
        out.flush()
    }
}

fn role(m: &Message) -> &'static str {
    match m.role {
        a2a_runtime::types::Role::User => "user",
        _ => "agent",
    }
}
