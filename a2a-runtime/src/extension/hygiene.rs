//! [`MetadataHygiene`]: which extensions' metadata a response may carry. Applied by the core to
//! every result and streamed event, after the response hooks, whatever the binding.
// Applied by the server's core: without the `server` feature only the public setting is used.
#![cfg_attr(not(feature = "server"), allow(dead_code))]

use std::sync::Arc;

use super::Negotiated;
use super::set::ExtensionSet;
use super::traits::Reply;
use crate::types::{Artifact, Message, Metadata, StreamResponse, Task};

/// Which extension metadata a server leaves in what it answers (set with
/// [`A2aServerBuilder::metadata_hygiene`](crate::server::A2aServerBuilder::metadata_hygiene)).
///
/// The metadata of a task, message, artifact or event is keyed by extension (its URI, or the
/// key the extension declares). A client that did not activate an extension should not get its
/// data: with [`Inactive`](Self::Inactive), the keys of the server's extensions that are not
/// active on the request are removed from results and streamed events (and their URIs from
/// the objects' `extensions` lists); with [`Unknown`](Self::Unknown), keys that name an
/// extension the server does not know (an `http://` or `https://` URI) are removed too. The
/// stored task keeps everything: only what the caller gets is filtered.
///
/// ```
/// use a2a_runtime::extension::MetadataHygiene;
/// # use a2a_runtime::server::A2aServer;
/// let builder = A2aServer::builder().metadata_hygiene(MetadataHygiene::Inactive);
/// # let _ = builder;
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum MetadataHygiene {
    /// Metadata is answered as the agent and the hooks left it (the default; costs nothing).
    #[default]
    Off,
    /// The keys of the server's extensions that are not active on the request are removed;
    /// unknown keys are kept.
    Inactive,
    /// As [`Inactive`](Self::Inactive), and keys naming extensions the server does not know
    /// (URIs) are removed too.
    Unknown,
}

/// The filter of one server: its mode and the metadata keys of its extensions.
#[derive(Debug)]
pub(crate) struct Hygiene {
    drop_unknown: bool,
    /// (metadata key, URI) of every configured extension.
    keys: Vec<(&'static str, &'static str)>,
}

impl Hygiene {
    /// The filter for `mode` over `set`'s extensions (`None` when off).
    pub(crate) fn of(mode: MetadataHygiene, set: &ExtensionSet) -> Option<Arc<Self>> {
        let drop_unknown = match mode {
            MetadataHygiene::Off => return None,
            MetadataHygiene::Inactive => false,
            MetadataHygiene::Unknown => true,
        };
        let keys = set
            .inner
            .entries
            .iter()
            .map(|e| (e.ext.metadata_key(), e.uri))
            .collect();
        Some(Arc::new(Self { drop_unknown, keys }))
    }

    /// True when `key` may be answered on a request that activated `active`.
    fn keeps(&self, key: &str, active: &Negotiated) -> bool {
        match self.keys.iter().find(|(k, uri)| *k == key || *uri == key) {
            Some((_, uri)) => active.is_active_uri(uri),
            None => !(self.drop_unknown && names_an_extension(key)),
        }
    }

    fn metadata(&self, metadata: &mut Metadata, active: &Negotiated) {
        if !metadata.0.is_empty() {
            metadata.0.retain(|k, _| self.keeps(k, active));
        }
    }

    fn uris(&self, uris: &mut Vec<String>, active: &Negotiated) {
        uris.retain(|u| self.keeps(u, active));
    }

    fn message(&self, m: &mut Message, active: &Negotiated) {
        self.metadata(&mut m.metadata, active);
        self.uris(&mut m.extensions, active);
    }

    fn artifact(&self, a: &mut Artifact, active: &Negotiated) {
        self.metadata(&mut a.metadata, active);
        self.uris(&mut a.extensions, active);
    }

    fn task(&self, t: &mut Task, active: &Negotiated) {
        self.metadata(&mut t.metadata, active);
        if let Some(m) = &mut t.status.message {
            self.message(m, active);
        }
        for m in &mut t.history {
            self.message(m, active);
        }
        for a in &mut t.artifacts {
            self.artifact(a, active);
        }
    }

    /// Removes from `event` what the request that activated `active` may not get.
    pub(crate) fn event(&self, event: &mut StreamResponse, active: &Negotiated) {
        match event {
            StreamResponse::Task(t) => self.task(t, active),
            StreamResponse::Message(m) => self.message(m, active),
            StreamResponse::StatusUpdate(u) => {
                self.metadata(&mut u.metadata, active);
                if let Some(m) = &mut u.status.message {
                    self.message(m, active);
                }
            }
            StreamResponse::ArtifactUpdate(u) => {
                self.metadata(&mut u.metadata, active);
                self.artifact(&mut u.artifact, active);
            }
        }
    }

    /// Removes from `reply` what the request that activated `active` may not get.
    pub(crate) fn reply(&self, reply: &mut Reply<'_>, active: &Negotiated) {
        match reply {
            Reply::SendMessage(crate::types::SendMessageResponse::Task(t)) => self.task(t, active),
            Reply::Task(t) => self.task(t, active),
            Reply::SendMessage(crate::types::SendMessageResponse::Message(m)) => {
                self.message(m, active);
            }
            Reply::ListTasks(list) => {
                for t in &mut list.tasks {
                    self.task(t, active);
                }
            }
            Reply::Event(e) => self.event(e, active),
            Reply::PushConfig(_)
            | Reply::PushConfigs(_)
            | Reply::Empty(_)
            | Reply::AgentCard(_) => {}
        }
    }
}

/// True when a metadata key names an extension: an `http://` or `https://` URI.
fn names_an_extension(key: &str) -> bool {
    key.starts_with("https://") || key.starts_with("http://")
}
