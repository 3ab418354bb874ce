//! Updates with their delta applied to the held task, and events read back from the log.
#![allow(clippy::unwrap_used)]

use super::*;

#[tokio::test]
async fn an_update_with_its_delta_appends_the_chunk_to_the_held_task_instead_of_copying_it() {
    let store = InMemoryTaskStore::new();
    let scope = Scope::default();
    let mut live = task(1, TaskState::Working);
    live.artifacts = vec![Artifact {
        artifact_id: "a".into(),
        ..Artifact::new([Part::text("chunk 0")])
    }];
    let mut version = store.create(&scope, &live, None).await.unwrap();
    let first = first_text_at(&store, &scope, "t001");
    for n in 1..=20 {
        let event = StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: live.id.clone(),
            context_id: live.context_id.clone(),
            artifact: Artifact {
                artifact_id: "a".into(),
                ..Artifact::new([Part::text(format!("chunk {n}"))])
            },
            append: true,
            ..Default::default()
        });
        assert!(apply(&mut live, &event));
        let replay = |task: &mut Task| apply(task, &event);
        let write = Write::Update {
            expected_version: version,
            delta: Some(Delta::new(&replay)),
        };
        version = store
            .write_now(&scope, &Arc::new(live.clone()), None, write, None)
            .unwrap();
        assert_eq!(held_value(&store, &scope, "t001"), live, "chunk {n}");
        // The chunks held before are where they were: appended to, not copied.
        assert_eq!(first_text_at(&store, &scope, "t001"), first, "chunk {n}");
    }
    assert_eq!(live.artifacts[0].parts.len(), 21);
    assert_eq!(
        store.get(&scope, &live.id).await.unwrap().unwrap().task,
        live
    );

    // A delta the held task refuses (here: an event for another task) is not applied: the
    // written task is copied as it is.
    let other = StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
        task_id: "elsewhere".into(),
        context_id: live.context_id.clone(),
        artifact: Artifact {
            artifact_id: "a".into(),
            ..Artifact::new([Part::text("stray")])
        },
        append: true,
        ..Default::default()
    });
    live.status.message = Some(Message::default());
    let replay = |task: &mut Task| apply(task, &other);
    let write = Write::Update {
        expected_version: version,
        delta: Some(Delta::new(&replay)),
    };
    store
        .write_now(&scope, &Arc::new(live.clone()), None, write, None)
        .unwrap();
    assert_eq!(held_value(&store, &scope, "t001"), live);
    assert!(!apply(&mut live.clone(), &other));
}

/// Applies `event` to `task` as the task lifecycle does, for the events these tests send
/// (the delta replayed on the held task); false for an artifact of another task.
fn apply(task: &mut Task, event: &StreamResponse) -> bool {
    match event {
        StreamResponse::ArtifactUpdate(e) if e.task_id != task.id => return false,
        StreamResponse::ArtifactUpdate(e) => {
            let id = &e.artifact.artifact_id;
            match task.artifacts.iter_mut().find(|a| &a.artifact_id == id) {
                Some(a) if e.append => a.parts.extend(e.artifact.parts.iter().cloned()),
                Some(a) => *a = e.artifact.clone(),
                None => task.artifacts.push(e.artifact.clone()),
            }
        }
        StreamResponse::StatusUpdate(e) => task.status = e.status.clone(),
        StreamResponse::Task(t) => {
            task.status = t.status.clone();
            task.artifacts = t.artifacts.clone();
        }
        StreamResponse::Message(_) => return false,
    }
    true
}

/// A live task written event by event as the runtime writes it (each event applied to the
/// held copy, and logged), with the events delivered so far.
pub(super) struct Streamed {
    pub(super) store: InMemoryTaskStore,
    pub(super) scope: Scope,
    pub(super) live: Task,
    pub(super) version: u64,
    pub(super) delivered: Vec<SeqEvent>,
}

impl Streamed {
    /// The live task `t{n}`, created with a status update as its first event, or without
    /// an event (its log then starts at 2).
    pub(super) async fn new(n: i64, with_event: bool) -> Self {
        let mut s = Self {
            store: InMemoryTaskStore::new(),
            scope: Scope::new("t", "me"),
            live: task(n, TaskState::Working),
            version: 0,
            delivered: Vec::new(),
        };
        let first = with_event.then(|| s.status(TaskState::Working));
        s.version = s
            .store
            .create(&s.scope, &s.live, first.as_ref())
            .await
            .unwrap();
        s.delivered
            .extend(first.map(|event| SeqEvent { seq: 1, event }));
        s
    }

    pub(super) fn send(&mut self, events: impl IntoIterator<Item = StreamResponse>) {
        for event in events {
            assert!(apply(&mut self.live, &event), "{event:?}");
            let shared = Arc::new(SeqEvent {
                seq: self.version + 1,
                event,
            });
            let replay = |task: &mut Task| apply(task, &shared.event);
            let write = Write::Update {
                expected_version: self.version,
                delta: Some(Delta::new(&replay)),
            };
            self.version = self
                .store
                .write_now(
                    &self.scope,
                    &Arc::new(self.live.clone()),
                    None,
                    write,
                    Some(shared.clone()),
                )
                .unwrap();
            self.delivered.push(SeqEvent::clone(&shared));
        }
    }

    pub(super) fn chunk(&self, artifact: &str, text: &str, append: bool) -> StreamResponse {
        StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: self.live.id.clone(),
            context_id: self.live.context_id.clone(),
            artifact: Artifact {
                artifact_id: artifact.into(),
                ..Artifact::new([Part::text(text)])
            },
            append,
            ..Default::default()
        })
    }

    pub(super) fn status(&self, state: TaskState) -> StreamResponse {
        StreamResponse::StatusUpdate(crate::types::TaskStatusUpdateEvent {
            task_id: self.live.id.clone(),
            context_id: self.live.context_id.clone(),
            status: TaskStatus {
                state,
                message: None,
                timestamp: Timestamp::from_millis(5_000),
            },
            metadata: Default::default(),
        })
    }

    /// Asserts that the log holds `chunks` chunks by reference, and that its events after
    /// `after` read back as they were delivered.
    pub(super) async fn assert_log(&self, chunks: usize, after: u64) {
        let logged = self.store.lock()[&self.scope].by_id[self.live.id.as_str()]
            .log
            .chunks();
        assert_eq!(logged, chunks);
        let read = self
            .store
            .events_after(&self.scope, &self.live.id, after, 100);
        let read = read.await.unwrap();
        let from = self.delivered.partition_point(|e| e.seq <= after);
        assert_eq!(read, self.delivered[from..]);
    }
}

#[tokio::test]
async fn streamed_chunks_read_back_from_the_log_exactly_as_delivered() {
    let mut s = Streamed::new(1, true).await;
    // A new artifact, chunks appended to it, another artifact with a name (logged as the
    // event), and one more chunk.
    let mut named = s.chunk("b", "b0", false);
    if let StreamResponse::ArtifactUpdate(e) = &mut named {
        e.artifact.name = "named".into();
        e.last_chunk = true;
    }
    s.send([
        s.chunk("a", "a0", false),
        s.chunk("a", "a1", true),
        s.chunk("a", "a2", true),
        named,
        s.chunk("a", "a3", true),
    ]);
    s.assert_log(4, 0).await;
    // From the middle, and a page of two.
    let read = s.store.events_after(&s.scope, &s.live.id, 3, 2).await;
    assert_eq!(read.unwrap(), s.delivered[3..5]);

    // Replacing artifact `a` first turns its logged chunks into the events they were.
    s.send([s.chunk("a", "replaced", false)]);
    s.assert_log(1, 0).await;
    s.send([
        s.status(TaskState::InputRequired),
        s.status(TaskState::Working),
        s.chunk("a", "r1", true),
    ]);
    s.assert_log(2, 0).await;

    // Finished (and held encoded): the chunks are read from the decoded task.
    s.send([s.status(TaskState::Completed)]);
    assert!(matches!(
        s.store.lock()[&s.scope].by_id["t001"].held,
        MemoryTask::Encoded(_)
    ));
    s.assert_log(2, 0).await;
}

#[tokio::test]
async fn a_task_event_replacing_the_artifacts_keeps_the_logged_chunks_readable() {
    let mut s = Streamed::new(3, false).await;
    let mut replacement = s.live.clone();
    replacement.artifacts = vec![Artifact {
        artifact_id: "y".into(),
        ..Artifact::new([Part::text("whole")])
    }];
    s.send([
        s.chunk("y", "y0", false),
        s.chunk("y", "y1", true),
        StreamResponse::Task(replacement),
        s.chunk("y", "y2", true),
    ]);
    // The two chunks before the task event were turned into events; the one after it is
    // read from the replacement's artifact.
    assert_eq!(s.live.artifacts[0].parts.len(), 2);
    s.assert_log(1, 1).await;

    // Finished by a task event that drops the artifacts: the last chunk is turned into
    // its event first.
    let mut done = s.live.clone();
    done.status.state = TaskState::Completed;
    done.artifacts.clear();
    s.send([StreamResponse::Task(done)]);
    s.assert_log(0, 1).await;
}

#[tokio::test]
async fn a_write_without_its_event_applied_keeps_the_logged_chunks_readable() {
    let mut s = Streamed::new(2, false).await;
    s.send([
        s.chunk("x", "x0", false),
        s.chunk("x", "x1", true),
        s.chunk("x", "x2", true),
    ]);
    s.assert_log(3, 1).await;
    // A plain write (no subscriber, or through the trait) replaces the held copy: here one
    // that replaces the artifact the chunks were read from.
    s.live.artifacts[0] = Artifact {
        artifact_id: "x".into(),
        ..Artifact::new([Part::text("other")])
    };
    s.store
        .update(&s.scope, &s.live, s.version, None)
        .await
        .unwrap();
    s.assert_log(0, 1).await;
}
