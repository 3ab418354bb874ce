//! A Server-Sent Events decoder (the WHATWG event-stream format): `data:` lines (several per
//! event are joined with `\n`), `id:`, `event:`, comments and keep-alives ignored, LF / CRLF /
//! CR line endings, a leading BOM, fields split across network chunks.

/// One dispatched event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` type (`message` when absent).
    pub event: String,
    /// The joined `data:` lines.
    pub data: String,
    /// The last `id:` seen (kept across events, as the spec says).
    pub id: Option<String>,
}

/// Incremental decoder: feed bytes, take complete events.
#[derive(Debug, Default)]
pub struct SseDecoder {
    buf: Vec<u8>,
    data: String,
    event: String,
    has_data: bool,
    id: Option<String>,
    started: bool,
    saw_cr: bool,
}

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes; returns the events completed by them.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        for &b in bytes {
            if self.saw_cr {
                self.saw_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\n' => self.line(&mut out),
                b'\r' => {
                    self.saw_cr = true;
                    self.line(&mut out);
                }
                _ => self.buf.push(b),
            }
        }
        out
    }

    /// True when a partial event (data not yet dispatched, or a partial line) is pending.
    pub fn has_partial(&self) -> bool {
        self.has_data || !self.buf.is_empty()
    }

    fn line(&mut self, out: &mut Vec<SseEvent>) {
        let mut line = std::mem::take(&mut self.buf);
        if !self.started {
            self.started = true;
            if line.starts_with(&[0xEF, 0xBB, 0xBF]) {
                line.drain(..3);
            }
        }
        if line.is_empty() {
            if self.has_data {
                let mut data = std::mem::take(&mut self.data);
                if data.ends_with('\n') {
                    data.pop();
                }
                let event = std::mem::take(&mut self.event);
                out.push(SseEvent {
                    event: if event.is_empty() {
                        "message".into()
                    } else {
                        event
                    },
                    data,
                    id: self.id.clone(),
                });
            }
            self.has_data = false;
            self.event.clear();
            return;
        }
        if line[0] == b':' {
            return;
        }
        let text = String::from_utf8_lossy(&line);
        let (field, value) = match text.find(':') {
            Some(i) => {
                let v = &text[i + 1..];
                (&text[..i], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (text.as_ref(), ""),
        };
        match field {
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
                self.has_data = true;
            }
            "event" => self.event = value.to_owned(),
            "id" if !value.contains('\0') => self.id = Some(value.to_owned()),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_line_data_comments_ids_and_split_chunks() {
        let mut d = SseDecoder::new();
        let mut events = d.feed(b"\xEF\xBB\xBF: keep-alive\n\nid: 7\nda");
        events.extend(d.feed(b"ta: {\"a\":\r\ndata: 1}\r\n\r\nevent: error\ndata:x\n\n"));
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].data, "{\"a\":\n1}");
        assert_eq!(events[0].id.as_deref(), Some("7"));
        assert_eq!(events[0].event, "message");
        assert_eq!(events[1].event, "error");
        assert_eq!(events[1].data, "x");
        assert_eq!(events[1].id.as_deref(), Some("7"));
        assert!(!d.has_partial());
        d.feed(b"data: cut");
        assert!(d.has_partial());
    }

    #[test]
    fn cr_only_line_endings() {
        let mut d = SseDecoder::new();
        let events = d.feed(b"data: a\r\rdata: b\r\r");
        assert_eq!(
            events.iter().map(|e| e.data.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
    }
}
