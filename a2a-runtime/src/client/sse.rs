//! A Server-Sent Events decoder (the WHATWG event-stream format): `data:` lines (several per
//! event are joined with `\n`), `id:`, `event:`, comments and keep-alives ignored, LF / CRLF /
//! CR line endings, a leading BOM, fields split across network chunks. A decoder built
//! [`with_limits`](SseDecoder::with_limits) refuses a line or an event larger than its limits
//! ([`try_feed`](SseDecoder::try_feed)) instead of holding it.

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

/// A line or an event longer than a decoder's limit (see [`SseDecoder::with_limits`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SseLimitError {
    /// A line (a field) longer than the limit, in bytes.
    #[error("an event-stream line is longer than {0} bytes")]
    Line(usize),
    /// An event whose `data:` lines together are longer than the limit, in bytes.
    #[error("an event-stream event is larger than {0} bytes")]
    Event(usize),
}

/// Incremental decoder: feed bytes, take complete events.
///
/// ```
/// use a2a_runtime::client::{SseDecoder, SseLimitError};
///
/// let mut decoder = SseDecoder::with_limits(16, 64);
/// let events = decoder.try_feed(b"id: 1\ndata: {}\n\n").unwrap();
/// assert_eq!(events[0].data, "{}");
/// assert_eq!(decoder.try_feed(&[b'x'; 17]), Err(SseLimitError::Line(16)));
/// ```
#[derive(Debug)]
pub struct SseDecoder {
    /// The longest line (bytes) and event (bytes of data) held.
    max_line: usize,
    max_event: usize,
    buf: Vec<u8>,
    data: String,
    event: String,
    has_data: bool,
    id: Option<String>,
    started: bool,
    saw_cr: bool,
}

impl Default for SseDecoder {
    fn default() -> Self {
        Self::with_limits(usize::MAX, usize::MAX)
    }
}

impl SseDecoder {
    /// A decoder at the start of a stream, without limits (for input already bounded).
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder that holds no line longer than `max_line` bytes and no event whose data is
    /// larger than `max_event` bytes: [`try_feed`](Self::try_feed) fails instead.
    pub fn with_limits(max_line: usize, max_event: usize) -> Self {
        Self {
            max_line,
            max_event,
            buf: Vec::new(),
            data: String::new(),
            event: String::new(),
            has_data: false,
            id: None,
            started: false,
            saw_cr: false,
        }
    }

    /// Feeds bytes; returns the events completed by them. Ignores the limits: use
    /// [`try_feed`](Self::try_feed) on a decoder built [`with_limits`](Self::with_limits).
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        let limits = (self.max_line, self.max_event);
        (self.max_line, self.max_event) = (usize::MAX, usize::MAX);
        // Without limits nothing fails.
        let _ = self.decode(bytes, usize::MAX, &mut out);
        (self.max_line, self.max_event) = limits;
        out
    }

    /// Feeds bytes; returns the events completed by them, or which limit a line or an event
    /// broke (the decoder is then unusable: the stream cannot be read further).
    pub fn try_feed(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, SseLimitError> {
        let mut out = Vec::new();
        self.decode(bytes, usize::MAX, &mut out)?;
        Ok(out)
    }

    /// Decodes `bytes` until `out` holds `max_events` events; returns how many bytes it used
    /// (the rest is for a later call).
    pub(crate) fn decode(
        &mut self,
        bytes: &[u8],
        max_events: usize,
        out: &mut Vec<SseEvent>,
    ) -> Result<usize, SseLimitError> {
        for (i, &b) in bytes.iter().enumerate() {
            if out.len() >= max_events {
                return Ok(i);
            }
            if self.saw_cr {
                self.saw_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\n' => self.line(out)?,
                b'\r' => {
                    self.saw_cr = true;
                    self.line(out)?;
                }
                _ if self.buf.len() >= self.max_line => {
                    return Err(SseLimitError::Line(self.max_line));
                }
                _ => self.buf.push(b),
            }
        }
        Ok(bytes.len())
    }

    /// True when a partial event (data not yet dispatched, or a partial line) is pending.
    pub fn has_partial(&self) -> bool {
        self.has_data || !self.buf.is_empty()
    }

    fn line(&mut self, out: &mut Vec<SseEvent>) -> Result<(), SseLimitError> {
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
            return Ok(());
        }
        if line[0] == b':' {
            return Ok(());
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
                if self.data.len().saturating_add(value.len()) >= self.max_event {
                    return Err(SseLimitError::Event(self.max_event));
                }
                self.data.push_str(value);
                self.data.push('\n');
                self.has_data = true;
            }
            "event" => self.event = value.to_owned(),
            "id" if !value.contains('\0') => self.id = Some(value.to_owned()),
            _ => {}
        }
        Ok(())
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
    fn limits_refuse_long_lines_and_large_events_and_stop_at_max_events() {
        let mut d = SseDecoder::with_limits(8, 10);
        assert_eq!(d.try_feed(b"data: 123"), Err(SseLimitError::Line(8)));
        let mut d = SseDecoder::with_limits(8, 6);
        assert_eq!(
            d.try_feed(b"data: 12\ndata: 34\ndata: 5\n"),
            Err(SseLimitError::Event(6))
        );
        let mut d = SseDecoder::with_limits(8, 10);
        let mut out = Vec::new();
        let used = d.decode(b"data: 1\n\ndata: 2\n\ndata: 3\n\n", 2, &mut out);
        assert_eq!(used, Ok(18));
        assert_eq!(out.len(), 2);
        let used = d.decode(b"data: 3\n\n", 2, &mut Vec::new());
        assert_eq!(used, Ok(9));
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
