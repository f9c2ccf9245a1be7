//! Applications on top of TCP: how much data a connection has to send, and
//! when.
//!
//! - **Bulk** — greedy FTP: unlimited data from the start.
//! - **Files** — finite transfers, one after another on the same
//!   connection (or each on a new one: `new_connection`), of fixed or
//!   random size, back to back or separated by a think time; each
//!   transfer's completion time is recorded (from the moment its data is
//!   handed to TCP to the moment its last byte is acknowledged).
//! - **Phases** — greedy in some intervals and, in the others, chunks of
//!   `chunk` bytes with `pause` between one chunk's acknowledgement and the
//!   next chunk (the JoBS paper's Experiment 2: 8 KB every 175 ms). When a
//!   greedy phase ends, data not yet sent is withdrawn.
//!
//! An application answers each event with an [`Action`]: bytes to hand to
//! TCP, whether to withdraw unsent data, and when to be woken next.

use phb::{Rng, Time};

/// A size distribution for file transfers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SizeDist {
    Fixed(u64),
    Exponential {
        mean: u64,
    },
    /// Pareto with the given mean and shape (> 1), ns-2's scale convention.
    Pareto {
        mean: u64,
        shape: f64,
    },
}

impl SizeDist {
    fn draw(&self, rng: &mut Rng) -> u64 {
        match *self {
            SizeDist::Fixed(n) => n,
            SizeDist::Exponential { mean } => rng.exponential(mean as f64).round().max(1.0) as u64,
            SizeDist::Pareto { mean, shape } => rng.pareto(mean as f64, shape).round().max(1.0) as u64,
        }
    }
}

/// One interval of a phased application, from `from` until the next.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PhaseMode {
    Greedy,
    Chunks { chunk: u64, pause: Time },
}

/// What an application does, as a scenario declares it.
#[derive(Clone, Debug, PartialEq)]
pub enum AppModel {
    Bulk,
    /// `think`: mean of an exponential pause between transfers (`None`:
    /// back to back). `new_connection`: each transfer after the first
    /// starts as on a new connection (fresh congestion and RTT state),
    /// instead of inheriting the previous transfer's.
    Files {
        size: SizeDist,
        think: Option<Time>,
        new_connection: bool,
    },
    /// Phases as `(start, mode)`, sorted by start time, relative to the
    /// flow's start.
    Phases(Vec<(Time, PhaseMode)>),
}

/// What the application asks of TCP after an event.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Action {
    /// Bytes to hand over (`u64::MAX`: unlimited).
    pub push: u64,
    /// Withdraw data handed over but not yet sent.
    pub withdraw: bool,
    /// Hand the data over on a new connection (`Sender::start_new_connection`).
    pub new_connection: bool,
    /// Wake the application at this time.
    pub wake: Option<Time>,
}

/// A completed transfer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transfer {
    pub size: u64,
    pub start: Time,
    pub end: Time,
}

enum State {
    Bulk,
    Files { size: SizeDist, think: Option<Time>, new_connection: bool, current: Option<(u64, u64, Time)> },
    Phases { phases: Vec<(Time, PhaseMode)>, index: usize, chunk_end: Option<u64>, origin: Time },
}

/// A running application.
pub struct App {
    state: State,
    rng: Rng,
    /// Bytes handed to TCP so far (stream offset of the next byte).
    written: u64,
    pub transfers: Vec<Transfer>,
}

impl App {
    pub fn new(model: &AppModel, rng: Rng) -> App {
        let state = match model {
            AppModel::Bulk => State::Bulk,
            AppModel::Files { size, think, new_connection } => {
                State::Files { size: *size, think: *think, new_connection: *new_connection, current: None }
            }
            AppModel::Phases(phases) => {
                State::Phases { phases: phases.clone(), index: 0, chunk_end: None, origin: Time::ZERO }
            }
        };
        App { state, rng, written: 0, transfers: Vec::new() }
    }

    fn write(&mut self, bytes: u64) -> u64 {
        self.written = self.written.saturating_add(bytes);
        bytes
    }

    /// The flow starts at `now`.
    pub fn start(&mut self, now: Time) -> Action {
        match &mut self.state {
            State::Bulk => Action { push: self.write(u64::MAX), ..Action::default() },
            State::Files { .. } => self.next_file(now),
            State::Phases { origin, .. } => {
                *origin = now;
                self.enter_phase()
            }
        }
    }

    fn next_file(&mut self, now: Time) -> Action {
        let State::Files { size, new_connection, current, .. } = &mut self.state else { unreachable!() };
        let bytes = size.draw(&mut self.rng);
        *current = Some((self.written, self.written + bytes, now));
        let new_connection = *new_connection && self.written > 0;
        Action { push: self.write(bytes), new_connection, ..Action::default() }
    }

    fn enter_phase(&mut self) -> Action {
        let State::Phases { phases, index, chunk_end, origin } = &mut self.state else { unreachable!() };
        let next_start = phases.get(*index + 1).map(|p| *origin + p.0);
        let mode = phases[*index].1;
        *chunk_end = None;
        let mut action = Action { wake: next_start, ..Action::default() };
        match mode {
            PhaseMode::Greedy => action.push = u64::MAX,
            PhaseMode::Chunks { chunk, .. } => {
                action.withdraw = true;
                *chunk_end = Some(self.written.min(u64::MAX - chunk) + chunk);
                action.push = chunk;
            }
        }
        if action.push == u64::MAX {
            self.written = u64::MAX;
        } else {
            self.write(action.push);
        }
        action
    }

    /// TCP has acknowledged everything below `acked` at `now`.
    pub fn on_acked(&mut self, acked: u64, now: Time) -> Action {
        match &mut self.state {
            State::Bulk => Action::default(),
            State::Files { think, current, .. } => {
                let Some((start_byte, end_byte, started)) = *current else { return Action::default() };
                if acked < end_byte {
                    return Action::default();
                }
                self.transfers.push(Transfer { size: end_byte - start_byte, start: started, end: now });
                *current = None;
                match *think {
                    Some(mean) => {
                        let pause = Time::from_secs_f64(self.rng.exponential(mean.as_secs_f64()));
                        Action { wake: Some(now + pause), ..Action::default() }
                    }
                    None => self.next_file(now),
                }
            }
            State::Phases { phases, index, chunk_end, .. } => match (phases[*index].1, *chunk_end) {
                (PhaseMode::Chunks { pause, .. }, Some(end)) if acked >= end => {
                    *chunk_end = None;
                    Action { wake: Some(now + pause), ..Action::default() }
                }
                _ => Action::default(),
            },
        }
    }

    /// A wake-up the application asked for, at `now`. `sent` is TCP's
    /// highest byte sent.
    pub fn on_wake(&mut self, now: Time, sent: u64) -> Action {
        match &mut self.state {
            State::Bulk => Action::default(),
            State::Files { current, .. } => {
                if current.is_some() {
                    return Action::default();
                }
                self.next_file(now)
            }
            State::Phases { phases, index, chunk_end, origin } => {
                let next_phase_due = phases.get(*index + 1).is_some_and(|p| now >= *origin + p.0);
                if next_phase_due {
                    *index += 1;
                    if self.written == u64::MAX {
                        self.written = sent;
                    }
                    return self.enter_phase();
                }
                match phases[*index].1 {
                    PhaseMode::Chunks { chunk, .. } if chunk_end.is_none() => {
                        *chunk_end = Some(self.written + chunk);
                        Action { push: self.write(chunk), ..Action::default() }
                    }
                    _ => Action::default(),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_back_to_back_record_completion_times() {
        let mut app = App::new(
            &AppModel::Files { size: SizeDist::Fixed(5000), think: None, new_connection: false },
            Rng::derive(1, "app"),
        );
        assert_eq!(app.start(Time::ZERO).push, 5000);
        assert_eq!(app.on_acked(4000, Time::from_millis(50)), Action::default());
        let next = app.on_acked(5000, Time::from_millis(80));
        assert_eq!(next.push, 5000);
        assert_eq!(app.transfers, vec![Transfer { size: 5000, start: Time::ZERO, end: Time::from_millis(80) }]);
    }

    #[test]
    fn think_time_separates_transfers() {
        let mut app = App::new(
            &AppModel::Files { size: SizeDist::Fixed(1000), think: Some(Time::from_secs(1)), new_connection: false },
            Rng::derive(1, "app"),
        );
        app.start(Time::ZERO);
        let pause = app.on_acked(1000, Time::from_millis(10));
        assert_eq!(pause.push, 0);
        let wake = pause.wake.expect("a think time");
        assert!(wake > Time::from_millis(10));
        assert_eq!(app.on_wake(wake, 1000).push, 1000);
    }

    #[test]
    fn a_new_connection_for_every_file_but_the_first() {
        let model = AppModel::Files { size: SizeDist::Fixed(1000), think: None, new_connection: true };
        let mut app = App::new(&model, Rng::derive(1, "app"));
        let first = app.start(Time::ZERO);
        assert_eq!((first.push, first.new_connection), (1000, false));
        let second = app.on_acked(1000, Time::from_millis(10));
        assert_eq!((second.push, second.new_connection), (1000, true));
    }

    #[test]
    fn phases_alternate_greedy_and_chunks() {
        let phases = vec![
            (Time::ZERO, PhaseMode::Greedy),
            (Time::from_secs(10), PhaseMode::Chunks { chunk: 8000, pause: Time::from_millis(175) }),
            (Time::from_secs(20), PhaseMode::Greedy),
        ];
        let mut app = App::new(&AppModel::Phases(phases), Rng::derive(1, "app"));
        let first = app.start(Time::from_secs(1));
        assert_eq!((first.push, first.wake), (u64::MAX, Some(Time::from_secs(11))));
        // At 11 s the greedy phase ends with 500 000 bytes sent: unsent data
        // is withdrawn and the first chunk follows.
        let chunks = app.on_wake(Time::from_secs(11), 500_000);
        assert_eq!((chunks.push, chunks.withdraw, chunks.wake), (8000, true, Some(Time::from_secs(21))));
        let pause = app.on_acked(508_000, Time::from_millis(11_100));
        assert_eq!(pause.wake, Some(Time::from_millis(11_275)));
        assert_eq!(app.on_wake(Time::from_millis(11_275), 508_000).push, 8000);
        assert_eq!(app.on_wake(Time::from_secs(21), 516_000).push, u64::MAX);
    }

    #[test]
    fn random_sizes_have_the_requested_mean() {
        let mut rng = Rng::derive(2, "sizes");
        let dist = SizeDist::Exponential { mean: 10_000 };
        let mean = (0..50_000).map(|_| dist.draw(&mut rng)).sum::<u64>() as f64 / 50_000.0;
        assert!((mean - 10_000.0).abs() < 150.0, "mean {mean}");
    }
}
