//! How the SQL stores keep a large task: its row holds the task without history and artifacts
//! (the head), and `a2a_task_items` holds one row per history message, per artifact (without
//! its parts) and per artifact part, each with the digest of its JSON. A write compares the new
//! task's items with the stored digests and writes only the items that changed, so an event that
//! appends a chunk to a long streamed artifact writes that chunk, not the whole task.
//!
//! Small tasks (most of them) stay whole in their row: splitting one costs more statements than
//! rewriting it. A task is split from the first write whose encoding exceeds [`SPLIT_ABOVE`] and
//! stays split from then on.
//!
//! Item positions: artifact `a` is at `(ARTIFACT, a, 0)`, and its parts, in groups of about
//! [`GROUP_BYTES`] (one row per small part would cost more than it saves), at `(PART, a, g)`.
//! History messages are numbered from the task's first message on, not from the start of the
//! history it keeps now: when the oldest messages are trimmed, the kept ones keep their
//! positions (and their rows), and only the trimmed rows are deleted.

use std::collections::HashMap;
use std::hash::{BuildHasher as _, RandomState};
use std::sync::LazyLock;

use super::StoreError;
use crate::types::{Artifact, Message, Part, PartContent, Task};

/// The encoded size above which a task is kept split into items.
pub(super) const SPLIT_ABOVE: usize = 16 * 1024;

/// The kind of an item: a history message.
pub(super) const HISTORY: i16 = 0;
/// The kind of an item: an artifact without its parts.
pub(super) const ARTIFACT: i16 = 1;
/// The kind of an item: consecutive parts of an artifact (a JSON array).
pub(super) const PART: i16 = 2;

/// Parts are kept in groups: a group is closed once it holds this many bytes. Groups are made
/// from the first part on, so appended parts change only the last group.
pub(super) const GROUP_BYTES: usize = 4096;

/// The most items one statement writes (8 parameters each, within both engines' limits).
pub(super) const ITEMS_PER_STATEMENT: usize = 500;

/// Where an item is: kind, artifact index (0 for history), position.
pub(super) type Slot = (i16, i64, i64);

/// One item of a split task.
#[derive(Debug)]
pub(super) struct Item {
    pub(super) slot: Slot,
    pub(super) digest: [u8; 8],
    pub(super) body: String,
}

/// A task split into its head and items (history positions from 0, before [`plan`] places them).
#[derive(Debug)]
pub(super) struct Split {
    pub(super) head: String,
    pub(super) items: Vec<Item>,
}

/// A stored item's place and digest.
#[derive(Debug)]
pub(super) struct Stored {
    pub(super) slot: Slot,
    pub(super) digest: Vec<u8>,
}

/// What a write changes: the items to insert or overwrite, and the slots to delete.
#[derive(Debug, Default)]
pub(super) struct Plan<'a> {
    pub(super) upserts: Vec<&'a Item>,
    pub(super) deletes: Vec<Slot>,
}

/// The key of [`digest`]: secret, drawn once per process.
static DIGEST_KEY: LazyLock<RandomState> = LazyLock::new(RandomState::new);

/// The digest of an item's JSON: keyed SipHash (the standard library's), 64 bits.
///
/// Keyed with a secret of this process, nobody can make two bodies of one slot share a digest
/// (which would leave the old body stored): without the key no collision can be searched for.
/// A cryptographic hash would do too, but it is the one cost of a write that grows with the
/// task, and SHA-256 unoptimised (a debug build) took more time than the rest of a streamed
/// task's writes. Digests written by another process (before a restart, by another instance)
/// never match: its first write of a large task rewrites the task's items once, under its key.
fn digest(body: &str) -> [u8; 8] {
    DIGEST_KEY.hash_one(body.as_bytes()).to_le_bytes()
}

fn encode<T: serde::Serialize>(value: &T, what: &str) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Backend(format!("encode {what}: {e}")))
}

fn decode<'a, T: serde::Deserialize<'a>>(json: &'a str, what: &str) -> Result<T, StoreError> {
    serde_json::from_str(json).map_err(|e| StoreError::Backend(format!("decode {what}: {e}")))
}

fn item(slot: Slot, body: String) -> Item {
    Item {
        slot,
        digest: digest(&body),
        body,
    }
}

fn index(i: usize) -> Result<i64, StoreError> {
    i64::try_from(i).map_err(|_| StoreError::Backend(format!("{i} items exceed the column range")))
}

/// A lower bound of the encoded size of `task`'s history and artifacts: their text and raw
/// bytes (so a task known to be large is split without being encoded whole first).
pub(super) fn size_at_least(task: &Task) -> usize {
    fn parts(parts: &[Part]) -> usize {
        parts
            .iter()
            .map(|p| match &p.content {
                PartContent::Text(t) | PartContent::Url(t) => t.len(),
                PartContent::Raw(b) => b.0.len(),
                _ => 0,
            })
            .sum()
    }
    task.history.iter().map(|m| parts(&m.parts)).sum::<usize>()
        + task
            .artifacts
            .iter()
            .map(|a| parts(&a.parts))
            .sum::<usize>()
}

/// Splits `task` into its head and items.
pub(super) fn split(task: &Task) -> Result<Split, StoreError> {
    let head = Task {
        id: task.id.clone(),
        context_id: task.context_id.clone(),
        status: task.status.clone(),
        artifacts: Vec::new(),
        history: Vec::new(),
        metadata: task.metadata.clone(),
    };
    let mut items = Vec::with_capacity(task.history.len() + 2 * task.artifacts.len());
    for (i, m) in task.history.iter().enumerate() {
        items.push(item((HISTORY, 0, index(i)?), encode(m, "message")?));
    }
    for (a, artifact) in task.artifacts.iter().enumerate() {
        let a = index(a)?;
        let header = Artifact {
            artifact_id: artifact.artifact_id.clone(),
            name: artifact.name.clone(),
            description: artifact.description.clone(),
            parts: Vec::new(),
            metadata: artifact.metadata.clone(),
            extensions: artifact.extensions.clone(),
        };
        items.push(item((ARTIFACT, a, 0), encode(&header, "artifact")?));
        let mut group = String::new();
        let mut g = 0;
        for part in &artifact.parts {
            group.push(if group.is_empty() { '[' } else { ',' });
            group.push_str(&encode(part, "part")?);
            if group.len() >= GROUP_BYTES {
                group.push(']');
                items.push(item((PART, a, g), std::mem::take(&mut group)));
                g += 1;
            }
        }
        if !group.is_empty() {
            group.push(']');
            items.push(item((PART, a, g), group));
        }
    }
    Ok(Split {
        head: encode(&head, "task")?,
        items,
    })
}

/// Places the history of `new` after what is `stored` and lists what the write changes.
///
/// The kept history continues the stored one when its first message is a stored message and
/// the messages after it match too (the oldest ones trimmed, new ones appended); otherwise the
/// new history takes fresh positions after the stored ones and replaces them.
pub(super) fn plan<'a>(new: &'a mut Split, stored: &[Stored]) -> Plan<'a> {
    let mut old_history: Vec<(i64, &[u8])> = stored
        .iter()
        .filter(|s| s.slot.0 == HISTORY)
        .map(|s| (s.slot.2, s.digest.as_slice()))
        .collect();
    old_history.sort_unstable_by_key(|(p, _)| *p);
    let new_history: Vec<&[u8; 8]> = new
        .items
        .iter()
        .filter(|i| i.slot.0 == HISTORY)
        .map(|i| &i.digest)
        .collect();
    let base = match new_history.first() {
        None => 0,
        Some(first) => (0..old_history.len())
            .find(|&k| {
                old_history[k].1 == first.as_slice()
                    && old_history[k..]
                        .iter()
                        .zip(&new_history)
                        .all(|(old, new)| old.1 == new.as_slice())
            })
            .map_or_else(
                || old_history.last().map_or(0, |(p, _)| p + 1),
                |k| old_history[k].0,
            ),
    };
    for i in &mut new.items {
        if i.slot.0 == HISTORY {
            i.slot.2 += base;
        }
    }
    let old: HashMap<Slot, &[u8]> = stored
        .iter()
        .map(|s| (s.slot, s.digest.as_slice()))
        .collect();
    let mut plan = Plan::default();
    let mut kept = std::collections::HashSet::with_capacity(new.items.len());
    for i in &new.items {
        kept.insert(i.slot);
        if old.get(&i.slot) != Some(&i.digest.as_slice()) {
            plan.upserts.push(i);
        }
    }
    plan.deletes = stored
        .iter()
        .map(|s| s.slot)
        .filter(|slot| !kept.contains(slot))
        .collect();
    plan.deletes.sort_unstable();
    plan
}

/// The task whose head is `head` and whose items are `items`, in slot order.
pub(super) fn assemble(
    head: &str,
    items: impl IntoIterator<Item = (Slot, String)>,
) -> Result<Task, StoreError> {
    let mut task: Task = decode(head, "task")?;
    let mut artifacts: Vec<(i64, Artifact)> = Vec::new();
    for ((kind, a, _), body) in items {
        match kind {
            HISTORY => task.history.push(decode::<Message>(&body, "message")?),
            ARTIFACT => artifacts.push((a, decode(&body, "artifact")?)),
            PART => {
                let parts: Vec<Part> = decode(&body, "parts")?;
                // The artifacts come first, in order; then the parts, artifact by artifact.
                match artifacts.binary_search_by_key(&a, |(at, _)| *at) {
                    Ok(at) => artifacts[at].1.parts.extend(parts),
                    Err(_) => {
                        return Err(StoreError::Backend(format!(
                            "task {}: a part of artifact {a}, which is not stored",
                            task.id
                        )));
                    }
                }
            }
            other => {
                return Err(StoreError::Backend(format!(
                    "task {}: unknown item kind {other}",
                    task.id
                )));
            }
        }
    }
    task.artifacts = artifacts.into_iter().map(|(_, a)| a).collect();
    Ok(task)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::types::{Message, Role, TaskState, TaskStatus};

    fn message(n: usize) -> Message {
        Message {
            message_id: format!("m{n}").into(),
            ..Message::new(Role::User, [Part::text(format!("message {n}"))])
        }
    }

    fn task(history: std::ops::Range<usize>, chunks: usize) -> Task {
        Task {
            id: "t".into(),
            status: TaskStatus::new(TaskState::Working),
            history: history.map(message).collect(),
            artifacts: vec![
                Artifact::new((0..chunks).map(|i| Part::text(format!("{i:>1000}")))).with_id("a"),
            ],
            ..Task::default()
        }
    }

    /// The rows a write leaves: the planned upserts applied over `stored`.
    fn apply(stored: &mut Vec<Stored>, split: &mut Split) -> (usize, usize) {
        let plan = plan(split, stored);
        let counts = (plan.upserts.len(), plan.deletes.len());
        let mut rows: HashMap<Slot, Vec<u8>> =
            stored.drain(..).map(|s| (s.slot, s.digest)).collect();
        for slot in &plan.deletes {
            rows.remove(slot);
        }
        for i in &plan.upserts {
            rows.insert(i.slot, i.digest.to_vec());
        }
        stored.extend(
            rows.into_iter()
                .map(|(slot, digest)| Stored { slot, digest }),
        );
        counts
    }

    #[test]
    fn writes_only_what_changed() {
        let mut stored = Vec::new();
        let mut first = split(&task(0..20, 40)).unwrap();
        let (written, _) = apply(&mut stored, &mut first);
        assert_eq!(written, stored.len());
        // One more chunk: the last group of parts only.
        let (written, deleted) = apply(&mut stored, &mut split(&task(0..20, 41)).unwrap());
        assert_eq!((written, deleted), (1, 0));
        // The 5 oldest messages trimmed, 2 appended: 2 written, 5 deleted.
        let (written, deleted) = apply(&mut stored, &mut split(&task(5..22, 41)).unwrap());
        assert_eq!((written, deleted), (2, 5));
        // Another history altogether: all of it written, all the old one deleted.
        let (written, deleted) = apply(&mut stored, &mut split(&task(100..110, 41)).unwrap());
        assert_eq!((written, deleted), (10, 17));
    }

    #[test]
    fn assembles_what_was_split() {
        let t = task(3..9, 25);
        let s = split(&t).unwrap();
        let mut items: Vec<(Slot, String)> =
            s.items.into_iter().map(|i| (i.slot, i.body)).collect();
        items.sort_by_key(|(slot, _)| *slot);
        assert_eq!(assemble(&s.head, items).unwrap(), t);
    }
}
