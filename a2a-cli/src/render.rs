//! Output (SPEC.md §9.2, §9.3): the `text` floor (one `Label: value` field per line, the same
//! labels every time, no control sequences, blocks under their own label closed by a blank
//! line and after the fields), or the protocol's own JSON types, one document or one per line.

use std::io::{self, Write as _};

use a2a_runtime::types::{
    AgentCard, AgentInterface, Artifact, ListTasksResponse, Message, Part, PartContent,
    SecurityScheme, StreamResponse, Task, TaskPushNotificationConfig, TaskState,
};
use serde::Serialize;

/// Writes to stdout, flushing after each piece so a stream shows as it arrives.
#[derive(Debug)]
pub(crate) struct Renderer {
    json: bool,
    verbose: bool,
    /// The identifiers and state last seen on a stream (restated with every event).
    ids: Option<(String, String)>,
    state: Option<TaskState>,
}

/// Text for the terminal: no control characters (an agent's text could carry escape codes).
fn clean(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .collect()
}

/// A value that must fit on its field's line.
fn one_line(s: &str) -> String {
    clean(s).split_whitespace().collect::<Vec<_>>().join(" ")
}

fn part_kind(p: &Part) -> &'static str {
    match &p.content {
        PartContent::Text(_) => "text",
        PartContent::Data(_) => "data",
        PartContent::Url(_) | PartContent::Raw(_) => "file",
        PartContent::Missing | PartContent::Conflicting(_) => "invalid",
    }
}

/// A part as block content: text as text, data as indented JSON, a file by name, media type
/// and size (its bytes are written only by `task download`).
fn part_block(p: &Part, verbose: bool) -> String {
    let media = if p.media_type.is_empty() {
        "unknown type".to_owned()
    } else {
        clean(&p.media_type)
    };
    let name = if p.filename.is_empty() {
        "unnamed".to_owned()
    } else {
        clean(&p.filename)
    };
    let body = match &p.content {
        PartContent::Text(t) => clean(t),
        PartContent::Data(v) => serde_json::to_string_pretty(v).unwrap_or_default(),
        PartContent::Raw(b) => format!("[file {name}, {media}, {} bytes]", b.0.len()),
        PartContent::Url(u) => format!("[file {name}, {media}, at {}]", clean(u)),
        PartContent::Missing | PartContent::Conflicting(_) => "[invalid part]".into(),
    };
    if verbose {
        let meta = if p.metadata.0.is_empty() {
            String::new()
        } else {
            format!(
                " metadata {}",
                serde_json::Value::Object(p.metadata.0.clone())
            )
        };
        format!("[{} part, {media}{meta}]\n{body}", part_kind(p))
    } else {
        body
    }
}

fn parts_block(parts: &[Part], verbose: bool) -> String {
    let mut s = String::new();
    for p in parts {
        let b = part_block(p, verbose);
        // Consecutive text parts are one text; everything else starts on its own line.
        if !s.is_empty() && (verbose || !matches!(p.content, PartContent::Text(_))) {
            s.push('\n');
        }
        s.push_str(&b);
    }
    s
}

fn yes(b: Option<bool>) -> &'static str {
    if b.unwrap_or(false) { "yes" } else { "no" }
}

/// Collects field lines, then blocks, and writes them at once.
#[derive(Default)]
struct Doc {
    fields: String,
    blocks: String,
}

impl Doc {
    fn field(&mut self, label: &str, value: impl AsRef<str>) {
        self.fields.push_str(label);
        self.fields.push_str(": ");
        self.fields.push_str(&one_line(value.as_ref()));
        self.fields.push('\n');
    }

    fn block(&mut self, label: &str, title: &str, content: &str) {
        self.blocks.push_str(label);
        self.blocks.push_str(": ");
        self.blocks.push_str(&one_line(title));
        self.blocks.push('\n');
        let content = content.trim_end_matches('\n');
        if !content.is_empty() {
            self.blocks.push_str(content);
            self.blocks.push('\n');
        }
        self.blocks.push('\n');
    }

    fn write(self) -> io::Result<()> {
        let mut out = io::stdout().lock();
        out.write_all(self.fields.as_bytes())?;
        out.write_all(self.blocks.as_bytes())?;
        out.flush()
    }
}

impl Renderer {
    pub(crate) fn new(json: bool, verbose: bool) -> Self {
        Self {
            json,
            verbose,
            ids: None,
            state: None,
        }
    }

    pub(crate) fn is_json(&self) -> bool {
        self.json
    }

    /// One JSON document on one line.
    pub(crate) fn json_line<T: Serialize>(&self, value: &T) -> io::Result<()> {
        let text = serde_json::to_string(value).map_err(io::Error::other)?;
        let mut out = io::stdout().lock();
        writeln!(out, "{text}")?;
        out.flush()
    }

    pub(crate) fn value(&self, value: &serde_json::Value) -> io::Result<()> {
        if self.json {
            return self.json_line(value);
        }
        let mut d = Doc::default();
        d.block(
            "Result",
            "",
            &serde_json::to_string_pretty(value).unwrap_or_default(),
        );
        d.write()
    }

    pub(crate) fn card(
        &self,
        card: &AgentCard,
        in_use: Option<&AgentInterface>,
        extra: &[(&str, String)],
    ) -> io::Result<()> {
        if self.json {
            return self.json_line(card);
        }
        let mut d = Doc::default();
        d.field("Name", &card.name);
        d.field("Description", &card.description);
        d.field("Version", &card.version);
        if let Some(p) = &card.provider {
            d.field("Provider", format!("{} {}", p.organization, p.url));
        }
        d.field("Streaming", yes(card.capabilities.streaming));
        d.field(
            "Push Notifications",
            yes(card.capabilities.push_notifications),
        );
        d.field("Extended Card", yes(card.capabilities.extended_agent_card));
        for i in &card.supported_interfaces {
            let tenant = if i.tenant.is_empty() {
                String::new()
            } else {
                format!(" tenant={}", i.tenant)
            };
            d.field(
                "Interface",
                format!(
                    "{} {} {}{tenant}",
                    i.protocol_binding.as_str(),
                    i.url,
                    if i.protocol_version.is_empty() {
                        "?"
                    } else {
                        &i.protocol_version
                    }
                ),
            );
        }
        if let Some(i) = in_use {
            d.field(
                "Transport",
                format!("{} {}", i.protocol_binding.as_str(), i.url),
            );
        }
        for (name, scheme) in &card.security_schemes {
            let kind = match scheme {
                SecurityScheme::ApiKeySecurityScheme(k) => {
                    format!("apiKey in {} {}", k.location, k.name)
                }
                SecurityScheme::HttpAuthSecurityScheme(h) => format!("http {}", h.scheme),
                SecurityScheme::Oauth2SecurityScheme(_) => "oauth2".into(),
                SecurityScheme::OpenIdConnectSecurityScheme(_) => "openIdConnect".into(),
                SecurityScheme::MtlsSecurityScheme(_) => "mutualTLS".into(),
            };
            d.field("Security Scheme", format!("{name} ({kind})"));
        }
        for e in &card.capabilities.extensions {
            let required = if e.required { " (required)" } else { "" };
            d.field("Extension", format!("{}{required}", e.uri));
        }
        for s in &card.skills {
            d.field("Skill", format!("{} {}", s.id, s.name));
        }
        for (label, value) in extra {
            d.field(label, value);
        }
        if self.verbose {
            for s in &card.skills {
                d.block("Skill Description", &s.id, &clean(&s.description));
            }
        }
        d.write()
    }

    fn task_doc(&self, task: &Task, d: &mut Doc) {
        d.field("Task ID", task.id.as_str());
        d.field("Context ID", task.context_id.as_str());
        d.field("State", task.status.state.as_str());
        if let Some(m) = &task.status.message {
            d.field("Status Message", parts_block(&m.parts, false));
        }
        for a in &task.artifacts {
            d.block(
                "Artifact",
                &artifact_title(a),
                &parts_block(&a.parts, self.verbose),
            );
        }
        if self.verbose {
            for m in &task.history {
                d.block(
                    "History",
                    &format!("{} {}", role(m), m.message_id.as_str()),
                    &parts_block(&m.parts, true),
                );
            }
        }
    }

    /// A task, with the command to continue it when it waits for the caller.
    pub(crate) fn task(&self, task: &Task) -> io::Result<()> {
        if self.json {
            return self.json_line(task);
        }
        let mut d = Doc::default();
        self.task_doc(task, &mut d);
        if let Some(next) = next_step(task.id.as_str(), task.status.state) {
            d.field("Next", next);
        }
        d.write()
    }

    /// A direct reply.
    pub(crate) fn message(&self, m: &Message) -> io::Result<()> {
        let mut d = Doc::default();
        d.field("Message ID", m.message_id.as_str());
        d.field("Context ID", m.context_id.as_str());
        if !m.task_id.as_str().is_empty() {
            d.field("Task ID", m.task_id.as_str());
        }
        d.field("Role", role(m));
        d.block("Message", "", &parts_block(&m.parts, self.verbose));
        d.write()
    }

    /// One event of a stream: JSON Lines, or the fields (identifiers and state restated on
    /// every event, so the last one names them) and its blocks.
    pub(crate) fn event(&mut self, event: &StreamResponse) -> io::Result<()> {
        match event {
            StreamResponse::Task(t) => {
                self.ids = Some((t.id.to_string(), t.context_id.to_string()));
                self.state = Some(t.status.state);
            }
            StreamResponse::StatusUpdate(u) => {
                self.ids = Some((u.task_id.to_string(), u.context_id.to_string()));
                self.state = Some(u.status.state);
            }
            StreamResponse::ArtifactUpdate(u) => {
                self.ids = Some((u.task_id.to_string(), u.context_id.to_string()));
            }
            StreamResponse::Message(_) => {}
        }
        if self.json {
            return self.json_line(event);
        }
        if let StreamResponse::Message(m) = event {
            self.message(m)?;
            return Ok(());
        }
        let mut d = Doc::default();
        let kind = match event {
            StreamResponse::Task(_) => "task",
            StreamResponse::StatusUpdate(_) => "status-update",
            StreamResponse::ArtifactUpdate(_) => "artifact-update",
            StreamResponse::Message(_) => "message",
        };
        d.field("Event", kind);
        if let Some((task, context)) = &self.ids {
            d.field("Task ID", task);
            d.field("Context ID", context);
        }
        if let Some(state) = self.state {
            d.field("State", state.as_str());
        }
        match event {
            StreamResponse::Task(t) => {
                for a in &t.artifacts {
                    d.block(
                        "Artifact",
                        &artifact_title(a),
                        &parts_block(&a.parts, self.verbose),
                    );
                }
            }
            StreamResponse::StatusUpdate(u) => {
                if let Some(m) = &u.status.message {
                    d.field("Status Message", parts_block(&m.parts, false));
                }
                if let Some(next) = next_step(u.task_id.as_str(), u.status.state) {
                    d.field("Next", next);
                }
            }
            StreamResponse::ArtifactUpdate(u) => {
                d.block(
                    "Artifact",
                    &artifact_title(&u.artifact),
                    &parts_block(&u.artifact.parts, self.verbose),
                );
            }
            StreamResponse::Message(_) => {}
        }
        let mut out = io::stdout().lock();
        out.write_all(d.fields.as_bytes())?;
        out.write_all(d.blocks.as_bytes())?;
        if d.blocks.is_empty() {
            out.write_all(b"\n")?;
        }
        out.flush()
    }

    /// A page of tasks: one record per task, a blank line between records.
    pub(crate) fn page(&self, page: &ListTasksResponse) -> io::Result<()> {
        if self.json {
            return self.json_line(page);
        }
        for t in &page.tasks {
            self.task_row(t)?;
        }
        let mut d = Doc::default();
        d.field("Tasks", page.tasks.len().to_string());
        if !page.next_page_token.is_empty() {
            d.field("Next Page Token", &page.next_page_token);
        }
        d.write()
    }

    pub(crate) fn task_row(&self, t: &Task) -> io::Result<()> {
        if self.json {
            return self.json_line(t);
        }
        let mut d = Doc::default();
        d.field("Task ID", t.id.as_str());
        d.field("Context ID", t.context_id.as_str());
        d.field("State", t.status.state.as_str());
        d.fields.push('\n');
        d.write()
    }

    pub(crate) fn push_config(&self, c: &TaskPushNotificationConfig) -> io::Result<()> {
        if self.json {
            return self.json_line(c);
        }
        let mut d = Doc::default();
        d.field("Config ID", c.id.as_str());
        d.field("Task ID", c.task_id.as_str());
        d.field("URL", &c.url);
        d.field("Token", if c.token.is_empty() { "none" } else { "set" });
        d.fields.push('\n');
        d.write()
    }

    pub(crate) fn deleted(&self, task_id: &str, id: &str) -> io::Result<()> {
        if self.json {
            return self.json_line(&serde_json::json!({}));
        }
        let mut d = Doc::default();
        d.field("Deleted", id);
        d.field("Task ID", task_id);
        d.write()
    }

    /// `Label: value` fields (a command's own summary).
    pub(crate) fn fields(&self, fields: &[(&str, String)]) -> io::Result<()> {
        let mut d = Doc::default();
        for (l, v) in fields {
            d.field(l, v);
        }
        d.write()
    }
}

fn role(m: &Message) -> &'static str {
    match m.role {
        a2a_runtime::types::Role::Agent => "agent",
        _ => "user",
    }
}

fn artifact_title(a: &Artifact) -> String {
    if a.name.is_empty() {
        a.artifact_id.to_string()
    } else {
        format!("{} ({})", a.name, a.artifact_id)
    }
}

/// The command to run next for a task in `state`, when there is one.
pub(crate) fn next_step(task_id: &str, state: TaskState) -> Option<String> {
    match state {
        TaskState::InputRequired => Some(format!("a2a send --task-id {task_id} \"<reply>\"")),
        TaskState::AuthRequired => Some(format!(
            "a2a send --task-id {task_id} --bearer TOKEN \"<reply>\""
        )),
        s if s.is_terminal() => None,
        _ => Some(format!("a2a task get --wait {task_id}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_sequences_never_reach_the_terminal() {
        assert_eq!(clean("a\x1b[31mred\x07\nb"), "a[31mred\nb");
        assert_eq!(one_line("a\n b\tc"), "a b c");
    }

    #[test]
    fn parts_render_by_kind() {
        let file = Part::raw(vec![0u8; 10])
            .with_filename("r.pdf")
            .with_media_type("application/pdf");
        assert_eq!(
            part_block(&file, false),
            "[file r.pdf, application/pdf, 10 bytes]"
        );
        let data = Part::data(serde_json::json!({"a": 1}));
        assert_eq!(part_block(&data, false), "{\n  \"a\": 1\n}");
        assert_eq!(
            parts_block(&[Part::text("a"), Part::text("b"), data], false),
            "ab\n{\n  \"a\": 1\n}"
        );
    }
}
