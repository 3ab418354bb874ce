//! The ProtoJSON form of `google.protobuf.Timestamp`: RFC 3339, read with any offset, written in
//! UTC with `Z` and milliseconds.

use std::borrow::Cow;
use std::fmt;

use chrono::{DateTime, Datelike, SecondsFormat, Timelike, Utc};

/// Parses RFC 3339 with any offset and normalises to UTC; a time outside years 0001–9999 once
/// in UTC is out of range, as in ProtoJSON.
pub(crate) fn parse(text: &str) -> Result<DateTime<Utc>, TimestampError> {
    let t = DateTime::parse_from_rfc3339(text)
        .map_err(TimestampError::Syntax)?
        .with_timezone(&Utc);
    if (1..=9999).contains(&t.year()) {
        Ok(t)
    } else {
        Err(TimestampError::OutOfRange)
    }
}

/// The wire form of `t`, `YYYY-MM-DDTHH:MM:SS.mmmZ`, written into `buf`; chrono's formatter
/// (allocating) only outside years 0–9999 and inside a leap second.
pub(crate) fn wire_form<'b>(t: &DateTime<Utc>, buf: &'b mut [u8; 24]) -> Cow<'b, str> {
    match write_fast(t, buf) {
        Some(text) => Cow::Borrowed(text),
        None => Cow::Owned(t.to_rfc3339_opts(SecondsFormat::Millis, true)),
    }
}

/// Writes `YYYY-MM-DDTHH:MM:SS.mmmZ` into `buf` without going through chrono's formatter.
/// `None` outside years 0–9999 and inside a leap second.
fn write_fast<'b>(t: &DateTime<Utc>, buf: &'b mut [u8; 24]) -> Option<&'b str> {
    let year = u32::try_from(t.year()).ok().filter(|y| *y <= 9999)?;
    let millis = t.timestamp_subsec_millis();
    if millis > 999 {
        return None;
    }
    let mut put = |at: usize, value: u32, width: usize| {
        let mut v = value;
        for i in (at..at + width).rev() {
            buf[i] = b'0' + (v % 10) as u8;
            v /= 10;
        }
    };
    put(0, year, 4);
    put(5, t.month(), 2);
    put(8, t.day(), 2);
    put(11, t.hour(), 2);
    put(14, t.minute(), 2);
    put(17, t.second(), 2);
    put(20, millis, 3);
    for (at, sep) in [
        (4, b'-'),
        (7, b'-'),
        (10, b'T'),
        (13, b':'),
        (16, b':'),
        (19, b'.'),
        (23, b'Z'),
    ] {
        buf[at] = sep;
    }
    std::str::from_utf8(buf).ok()
}

/// Why a text is not a [`Timestamp`](crate::types::Timestamp).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimestampError {
    /// Not RFC 3339.
    Syntax(chrono::ParseError),
    /// Outside years 0001–9999 once normalised to UTC.
    OutOfRange,
}

impl fmt::Display for TimestampError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Syntax(e) => fmt::Display::fmt(e, f),
            Self::OutOfRange => f.write_str("outside years 0001-9999 in UTC"),
        }
    }
}

impl std::error::Error for TimestampError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Syntax(e) => Some(e),
            Self::OutOfRange => None,
        }
    }
}
