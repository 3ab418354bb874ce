//! Building blocks shared by the wire types: id newtypes, [`Metadata`], [`Timestamp`], validation.

use std::fmt;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer, de};
use serde_json::{Map, Value};

use crate::error::{A2aError, FieldViolation};
use crate::json::timestamp;
pub use crate::json::timestamp::TimestampError;

/// `*dst = src.clone()`, skipped when they are already equal (no allocation for what did not
/// change).
pub(crate) fn assign<T: Clone + PartialEq>(dst: &mut T, src: &T) {
    if dst != src {
        *dst = src.clone();
    }
}

/// The text of a UUID: lowercase, hyphenated.
fn uuid_text(id: uuid::Uuid) -> Arc<str> {
    // Encoded into a stack buffer: `to_string` would go through `fmt`.
    let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
    Arc::from(&*id.hyphenated().encode_lower(&mut buf))
}

/// The milliseconds since the Unix epoch, as the system clock reads now.
pub(crate) fn unix_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A UUID v7 of the time `millis`: the time first, then 74 random bits.
// Time-ordered rather than v4 for the ids the SQL stores key rows by (tasks, their events and
// contexts): ids that sort after the last one fill the same B-tree pages instead of dirtying a
// page anywhere in the index per id (SQLite SendMessage/s 2.1-2.6k with v4 against 5.1-5.5k
// with v7, one run). No counter within the millisecond: all 74 bits stay random, so an id does
// not give away its neighbours. Built from a v4's random bytes: `Uuid::new_v7` took about 140
// more instructions per id (callgrind), converting the time through `uuid::Timestamp`.
fn uuid_v7(millis: u64) -> uuid::Uuid {
    let random = uuid::Uuid::new_v4().into_bytes();
    let mut tail = [0u8; 10];
    tail.copy_from_slice(&random[6..]);
    uuid::Builder::from_unix_timestamp_millis(millis, &tail).into_uuid()
}

macro_rules! id_newtype {
    ($(#[$doc:meta])* $name:ident, v7) => {
        id_newtype!(@type $(#[$doc])* $name);
        impl $name {
            /// A fresh unique id: a UUID v7 (its creation time in milliseconds, then 74
            /// random bits).
            pub fn random() -> Self {
                Self::at_millis(unix_millis())
            }
            /// [`random`](Self::random), of the time `millis` (read once for several ids).
            pub(crate) fn at_millis(millis: u64) -> Self {
                Self(Some(uuid_text(uuid_v7(millis))))
            }
        }
    };
    ($(#[$doc:meta])* $name:ident, v4) => {
        id_newtype!(@type $(#[$doc])* $name);
        impl $name {
            /// A fresh random id (a UUID v4).
            // Not keyed by in any store: no clock read (about 100 instructions) for an order.
            pub fn random() -> Self {
                Self(Some(uuid_text(uuid::Uuid::new_v4())))
            }
        }
    };
    (@type $(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        ///
        /// Cloning shares the text (a reference count, no allocation): ids are copied into every
        /// event, task, store entry and reply.
        #[derive(Clone, Default)]
        pub struct $name(Option<Arc<str>>);

        impl $name {
            /// The id as a string slice.
            pub fn as_str(&self) -> &str {
                self.0.as_deref().unwrap_or_default()
            }
            /// True when the id is empty (unset on the wire).
            pub fn is_empty(&self) -> bool {
                self.0.is_none()
            }
        }
        impl PartialEq for $name {
            fn eq(&self, other: &Self) -> bool {
                match (&self.0, &other.0) {
                    (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a == b,
                    (None, None) => true,
                    _ => false,
                }
            }
        }
        impl Eq for $name {}
        impl PartialOrd for $name {
            fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
                Some(self.cmp(other))
            }
        }
        impl Ord for $name {
            fn cmp(&self, other: &Self) -> std::cmp::Ordering {
                self.as_str().cmp(other.as_str())
            }
        }
        impl std::hash::Hash for $name {
            /// As the `str` (so that lookups by `&str` through `Borrow` find it).
            fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
                self.as_str().hash(state);
            }
        }
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                deserializer.deserialize_str(IdVisitor).map(Self)
            }
        }
        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(self.as_str(), f)
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
        impl From<String> for $name {
            fn from(s: String) -> Self {
                Self((!s.is_empty()).then(|| Arc::from(s)))
            }
        }
        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                Self((!s.is_empty()).then(|| Arc::from(s)))
            }
        }
        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.as_str().to_owned()
            }
        }
        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                self.as_str()
            }
        }
        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                self.as_str()
            }
        }
        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.as_str() == other
            }
        }
        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }
    };
}

/// Reads an id: a JSON string, shared once read (empty: unset).
struct IdVisitor;

impl de::Visitor<'_> for IdVisitor {
    type Value = Option<Arc<str>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok((!v.is_empty()).then(|| Arc::from(v)))
    }
}

id_newtype!(
    /// The server-generated id of a [`Task`](crate::types::Task).
    TaskId, v7
);
impl TaskId {
    /// The shared text (for a store's key: no copy; an empty id gets a fresh empty one).
    #[cfg(feature = "server")]
    pub(crate) fn shared(&self) -> Arc<str> {
        self.0.clone().unwrap_or_else(|| Arc::from(""))
    }
}

id_newtype!(
    /// The id grouping related tasks and messages into one conversation.
    ContextId, v7
);
id_newtype!(
    /// The id of a [`Message`](crate::types::Message), set by whoever creates it.
    MessageId, v4
);
id_newtype!(
    /// The id of an [`Artifact`](crate::types::Artifact), unique within its task.
    ArtifactId, v4
);
id_newtype!(
    /// The id of a push notification configuration, unique within its task.
    PushConfigId, v4
);

/// An arbitrary JSON object (`google.protobuf.Struct`): every `metadata` member, extension params.
///
/// Integers stay exact (they are kept as `i64`/`u64`, never turned into floats), keys are kept
/// sorted, and extension data lives under the extension's URI.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Metadata(pub Map<String, Value>);

impl Metadata {
    /// An empty object.
    pub fn new() -> Self {
        Self::default()
    }

    /// True when the object has no member (omitted on output).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::ops::Deref for Metadata {
    type Target = Map<String, Value>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for Metadata {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl From<Map<String, Value>> for Metadata {
    fn from(m: Map<String, Value>) -> Self {
        Self(m)
    }
}

impl FromIterator<(String, Value)> for Metadata {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

/// A point in time (`google.protobuf.Timestamp`).
///
/// Emitted as RFC 3339 in UTC with a `Z` suffix and millisecond precision
/// (`2026-03-20T09:12:44.120Z`, as the spec recommends; finer digits are kept in memory, for
/// ordering, and truncated on the wire); accepted with any offset (normalised to UTC) and 0–9
/// fractional digits, within the range of `google.protobuf.Timestamp` (years 0001–9999 in UTC).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub DateTime<Utc>);

impl Timestamp {
    /// The current time, truncated to milliseconds (what the wire carries).
    pub fn now() -> Self {
        // Milliseconds straight from the system clock: one calendar conversion, not two.
        let millis = i64::try_from(unix_millis()).ok();
        match millis.and_then(DateTime::from_timestamp_millis) {
            Some(t) => Self(t),
            None => {
                let now = Utc::now();
                Self(DateTime::from_timestamp_millis(now.timestamp_millis()).unwrap_or(now))
            }
        }
    }

    /// Parses RFC 3339 with any offset and normalises to UTC. A time outside years 0001–9999
    /// once in UTC (e.g. `0001-01-01T00:30:00+01:00`) is out of range, as in ProtoJSON.
    pub fn parse(text: &str) -> Result<Self, TimestampError> {
        timestamp::parse(text).map(Self)
    }

    /// Milliseconds since the Unix epoch.
    pub fn millis(&self) -> i64 {
        self.0.timestamp_millis()
    }

    /// The timestamp `millis` milliseconds after the Unix epoch, if representable.
    pub fn from_millis(millis: i64) -> Option<Self> {
        DateTime::from_timestamp_millis(millis).map(Self)
    }

    /// The wire form: RFC 3339, UTC, `Z`, milliseconds.
    pub fn to_rfc3339(&self) -> String {
        timestamp::wire_form(&self.0, &mut [0u8; 24]).into_owned()
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&timestamp::wire_form(&self.0, &mut [0u8; 24]))
    }
}

impl From<DateTime<Utc>> for Timestamp {
    fn from(t: DateTime<Utc>) -> Self {
        Self(t)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&timestamp::wire_form(&self.0, &mut [0u8; 24]))
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = Timestamp;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an RFC 3339 timestamp string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Timestamp, E> {
                Timestamp::parse(v).map_err(|e| {
                    E::custom(format!(
                        "invalid RFC 3339 timestamp {}: {e}",
                        crate::error::quoted(v)
                    ))
                })
            }
        }
        d.deserialize_str(V)
    }
}

/// Collects rule violations with their field paths while a value is validated.
#[derive(Debug, Default)]
pub struct Violations {
    /// Inline up to the depth of the wire types: no allocation to validate a request.
    path: smallvec::SmallVec<[PathSegment; 8]>,
    found: Vec<FieldViolation>,
}

#[derive(Debug)]
enum PathSegment {
    Field(&'static str),
    Index(usize),
}

impl Violations {
    /// An empty collector.
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs `f` with `field` appended to the current path.
    pub fn field(&mut self, field: &'static str, f: impl FnOnce(&mut Self)) {
        self.path.push(PathSegment::Field(field));
        f(self);
        self.path.pop();
    }

    /// Runs `f` for each element of a repeated field, with `field[i]` appended to the path.
    pub fn each<T>(&mut self, field: &'static str, items: &[T], mut f: impl FnMut(&mut Self, &T)) {
        self.path.push(PathSegment::Field(field));
        for (i, item) in items.iter().enumerate() {
            self.path.push(PathSegment::Index(i));
            f(self, item);
            self.path.pop();
        }
        self.path.pop();
    }

    /// Records a violation of `field` (relative to the current path).
    pub fn add(&mut self, field: &str, description: impl Into<String>) {
        let mut path = self.current_path();
        if !field.is_empty() {
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(field);
        }
        self.found.push(FieldViolation::new(path, description));
    }

    /// Records a violation when a REQUIRED string field is empty or absent.
    pub fn require_str(&mut self, field: &str, value: &str) {
        if value.is_empty() {
            self.add(field, "is required");
        }
    }

    /// Records a violation when a REQUIRED repeated field has no element.
    pub fn require_non_empty<T>(&mut self, field: &str, value: &[T]) {
        if value.is_empty() {
            self.add(field, "must contain at least one element");
        }
    }

    fn current_path(&self) -> String {
        let mut out = String::new();
        for seg in &self.path {
            match seg {
                PathSegment::Field(name) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(name);
                }
                PathSegment::Index(i) => {
                    out.push('[');
                    out.push_str(&i.to_string());
                    out.push(']');
                }
            }
        }
        out
    }

    /// The invalid-params error listing every violation, or `Ok` when there is none.
    pub fn into_result(self) -> Result<(), A2aError> {
        if self.found.is_empty() {
            Ok(())
        } else {
            Err(A2aError::invalid_params(self.found))
        }
    }
}

/// The REQUIRED-field and value rules of a wire type, checked after parsing.
///
/// ```
/// use a2a_runtime::types::{Message, Role, Validate};
/// let msg = Message { role: Role::User, ..Message::default() };
/// let err = msg.validate().unwrap_err();
/// assert!(err.to_string().contains("messageId"));
/// assert!(err.to_string().contains("parts"));
/// ```
pub trait Validate {
    /// Records every violation of this value into `v`, with paths relative to the current path.
    fn check(&self, v: &mut Violations);

    /// Validates the value as a whole: [`A2aError::InvalidParams`] naming each offending field.
    fn validate(&self) -> Result<(), A2aError> {
        let mut v = Violations::new();
        self.check(&mut v);
        v.into_result()
    }
}

impl<T: Validate> Validate for Option<T> {
    fn check(&self, v: &mut Violations) {
        if let Some(inner) = self {
            inner.check(v);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn ids_share_their_text_and_compare_hash_and_order_as_strings() {
        let a = TaskId::from("task-1");
        let copy = a.clone();
        assert!(matches!((&a.0, &copy.0), (Some(x), Some(y)) if Arc::ptr_eq(x, y)));
        let other = TaskId::from(String::from("task-1"));
        assert_eq!(a, other, "same text, different allocations");
        assert_ne!(a, TaskId::from("task-2"));
        let (first, second) = (TaskId::from("a"), TaskId::from("b"));
        assert!(first < second);
        let set: std::collections::HashSet<TaskId> = [a.clone()].into();
        assert!(set.contains("task-1"), "found by &str through Borrow");
        assert_eq!(a.shared().as_ref(), "task-1");
        assert_eq!(String::from(a), "task-1");
    }

    #[test]
    fn an_empty_id_is_unset_however_it_was_made() {
        let parsed: TaskId = serde_json::from_str(r#""""#).unwrap();
        for empty in [
            TaskId::default(),
            TaskId::from(""),
            TaskId::from(String::new()),
            parsed,
        ] {
            assert!(empty.is_empty());
            assert_eq!(empty, TaskId::default());
            assert_eq!(empty.as_str(), "");
            assert_eq!(serde_json::to_string(&empty).unwrap(), r#""""#);
        }
        let id: ContextId = serde_json::from_str(r#""c-\u0031""#).unwrap();
        assert_eq!(id.as_str(), "c-1", "escapes decoded");
        assert!(
            serde_json::from_str::<ContextId>("1").is_err(),
            "ids are strings"
        );
    }

    #[test]
    fn random_ids_are_lowercase_hyphenated_uuid_v7s_that_differ_and_increase() {
        let a = TaskId::random();
        let b = TaskId::random();
        assert_ne!(a, b);
        let parsed = uuid::Uuid::parse_str(a.as_str()).unwrap();
        assert_eq!(parsed.get_version_num(), 7);
        // The creation time leads: ids of later milliseconds sort after.
        let millis = |id: &TaskId| {
            let (secs, nanos) = uuid::Uuid::parse_str(id.as_str())
                .unwrap()
                .get_timestamp()
                .unwrap()
                .to_unix();
            secs * 1000 + u64::from(nanos) / 1_000_000
        };
        let now = u64::try_from(Utc::now().timestamp_millis()).unwrap();
        assert!(now.abs_diff(millis(&a)) < 60_000, "{a:?} is of now");
        let later = loop {
            let c = TaskId::random();
            if millis(&c) > millis(&a) {
                break c;
            }
        };
        assert!(a.as_str() < later.as_str(), "{a:?} sorts before {later:?}");
        assert_eq!(a.as_str(), parsed.hyphenated().to_string());
        assert_eq!(a.as_str().len(), 36);
        // Context ids are keyed by too; both of one task can share a clock read.
        let millis_now = unix_millis();
        let (t, c) = (
            TaskId::at_millis(millis_now),
            ContextId::at_millis(millis_now),
        );
        assert_ne!(t.as_str(), c.as_str());
        assert_eq!(
            t.as_str()[..13],
            c.as_str()[..13],
            "the same time leads both"
        );
        assert_eq!(
            uuid::Uuid::parse_str(c.as_str()).unwrap().get_version_num(),
            7
        );
    }

    #[test]
    fn ids_no_store_keys_by_are_random_uuid_v4s() {
        for id in [
            MessageId::random().as_str().to_owned(),
            ArtifactId::random().as_str().to_owned(),
            PushConfigId::random().as_str().to_owned(),
        ] {
            let parsed = uuid::Uuid::parse_str(&id).unwrap();
            assert_eq!(parsed.get_version_num(), 4, "{id}");
            assert_eq!(id, parsed.hyphenated().to_string());
        }
        assert_ne!(MessageId::random(), MessageId::random());
    }

    #[test]
    fn now_is_the_current_time_in_whole_milliseconds() {
        let before = Utc::now().timestamp_millis();
        let t = Timestamp::now();
        let after = Utc::now().timestamp_millis();
        assert!((before..=after).contains(&t.millis()));
        assert_eq!(t.0.timestamp_subsec_nanos() % 1_000_000, 0);
    }

    #[test]
    fn a_timestamp_is_written_in_milliseconds_which_read_back_exactly() {
        for (input, wire) in [
            ("2026-03-20T09:12:44Z", "2026-03-20T09:12:44.000Z"),
            ("2026-03-20T09:12:44.12Z", "2026-03-20T09:12:44.120Z"),
            ("2026-03-20T09:12:44.1239Z", "2026-03-20T09:12:44.123Z"),
            (
                "2026-03-20T10:12:44.123456+01:00",
                "2026-03-20T09:12:44.123Z",
            ),
            ("2016-12-31T23:59:60.5Z", "2016-12-31T23:59:60.500Z"),
            ("2016-12-31T23:59:60.0000005Z", "2016-12-31T23:59:60.000Z"),
        ] {
            let t = Timestamp::parse(input).unwrap();
            assert_eq!(t.to_rfc3339(), wire, "{input}");
            assert_eq!(t.to_string(), wire, "{input}");
            assert_eq!(serde_json::to_value(t).unwrap(), wire, "{input}");
            let back = Timestamp::parse(wire).unwrap();
            assert_eq!(back.to_rfc3339(), wire, "{input}");
            assert_eq!(back.millis(), t.millis(), "{input}");
        }
    }

    #[test]
    fn a_timestamp_outside_years_1_to_9999_in_utc_is_out_of_range() {
        for text in [
            "0001-01-01T00:30:00+01:00",
            "0000-01-01T00:30:00+01:00",
            "9999-12-31T23:30:00-01:00",
        ] {
            assert_eq!(
                Timestamp::parse(text),
                Err(TimestampError::OutOfRange),
                "{text}"
            );
        }
        for text in ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z"] {
            let t = Timestamp::parse(text).unwrap();
            assert_eq!(
                Timestamp::parse(&t.to_rfc3339()).unwrap().millis(),
                t.millis()
            );
        }
        let err = serde_json::from_str::<Timestamp>("\"0001-01-01T00:30:00+01:00\"").unwrap_err();
        assert!(err.to_string().contains("outside years 0001-9999"), "{err}");
    }
}
