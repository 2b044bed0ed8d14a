//! Work spread over all cores, results kept in order. The machines stagelint runs on are
//! often small (CI runners, laptops on battery): two cores is the case to be good at.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// The cores to use, asked once: each answer reads the cgroup files again.
fn threads() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Fewer items than this are handled on the calling thread: a thread costs more than they do.
pub const PAR_MIN_ITEMS: usize = 64;

/// Maps `items` on all cores, keeping order. Small inputs run on the calling thread, where
/// spawning would cost more than it saves.
pub fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = threads();
    if threads < 2 || items.len() < PAR_MIN_ITEMS {
        return items.iter().map(f).collect();
    }
    // Small chunks handed out in turn: files of one kind cluster in the (sorted) list, so
    // halving it would leave one core with all the stages and the other with nothing to do.
    let chunk = items.len().div_ceil(threads * 16).max(8);
    let chunks: Vec<&[T]> = items.chunks(chunk).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<(usize, Vec<R>)> = std::thread::scope(|scope| {
        let work = || {
            let mut mine = Vec::new();
            loop {
                let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(part) = chunks.get(index) else { break mine };
                mine.push((index, part.iter().map(&f).collect::<Vec<R>>()));
            }
        };
        let handles: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
        let mut done = work();
        for handle in handles {
            match handle.join() {
                Ok(results) => done.extend(results),
                // A panic in a worker is a bug; surface it on the caller's thread.
                Err(payload) => std::panic::resume_unwind(payload),
            }
        }
        done
    });
    done.sort_unstable_by_key(|(index, _)| *index);
    done.into_iter().flat_map(|(_, results)| results).collect()
}

/// `a()` and `b()`, on two cores when `both` says the work is worth a thread (as [`par_map`]
/// decides by [`PAR_MIN_ITEMS`]), else one after the other.
pub fn par_join<A: Send, B>(both: bool, a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B) -> (A, B) {
    if !both {
        return (a(), b());
    }
    std::thread::scope(|scope| {
        let first = scope.spawn(a);
        let second = b();
        match first.join() {
            Ok(first) => (first, second),
            // A panic in the other thread is a bug; surface it on the caller's thread.
            Err(payload) => std::panic::resume_unwind(payload),
        }
    })
}

/// Maps `items` on all cores and hands each item with its result to `consume`, in order, on
/// the calling thread, as soon as the items before it are consumed: the serial step after a
/// parallel one (adding files to a workspace) runs while the other cores map the rest, instead
/// of after all of it. The calling thread maps too whenever nothing is ready to consume.
pub fn par_map_consume<T: Send, R: Send>(items: Vec<T>, f: impl Fn(&T) -> R + Sync, mut consume: impl FnMut(T, R)) {
    let threads = threads();
    if threads < 2 || items.len() < PAR_MIN_ITEMS {
        for item in items {
            let result = f(&item);
            consume(item, result);
        }
        return;
    }
    // Finer chunks than `par_map`'s: the last chunk's consuming overlaps with nothing.
    let size = items.len().div_ceil(threads * 32).max(8);
    let mut rest = items.into_iter();
    let mut todo = Vec::new();
    loop {
        let chunk: Vec<T> = rest.by_ref().take(size).collect();
        if chunk.is_empty() {
            break;
        }
        todo.push(Mutex::new(chunk));
    }
    let next = AtomicUsize::new(0);
    // Set when any thread panics: no more chunks are claimed, so the panic surfaces after the
    // chunks being mapped, not after all the rest.
    let stop = AtomicBool::new(false);
    let done = Mutex::new(Done { chunks: todo.iter().map(|_| None).collect(), lost: false });
    let ready = Condvar::new();
    // Claims the next chunk and maps it; false when none is left.
    let map_next = || {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let index = next.fetch_add(1, Ordering::Relaxed);
        let Some(chunk) = todo.get(index) else { return false };
        let chunk = std::mem::take(&mut *relock(chunk.lock()));
        let mapped: Vec<(T, R)> = chunk
            .into_iter()
            .map(|item| {
                let result = f(&item);
                (item, result)
            })
            .collect();
        relock(done.lock()).chunks[index] = Some(mapped);
        ready.notify_all();
        true
    };
    std::thread::scope(|scope| {
        let handles: Vec<_> = (1..threads)
            .map(|_| {
                scope.spawn(|| {
                    // A worker that panics says so, or the caller would wait for its chunk forever.
                    let _alarm = Alarm { done: &done, ready: &ready, stop: &stop };
                    while map_next() {}
                })
            })
            .collect();
        // A panic here (in `consume`, or in a chunk this thread maps) stops the workers too.
        let _halt = Halt(&stop);
        for index in 0..todo.len() {
            let mapped = loop {
                let mut state = relock(done.lock());
                if let Some(mapped) = state.chunks[index].take() {
                    break Some(mapped);
                }
                if state.lost {
                    break None;
                }
                drop(state);
                // Nothing to consume yet: map a chunk here, or wait for the one being mapped.
                if !map_next() {
                    let state = relock(done.lock());
                    let _unused = relock(ready.wait_while(state, |s| s.chunks[index].is_none() && !s.lost));
                }
            };
            let Some(mapped) = mapped else { break };
            for (item, result) in mapped {
                consume(item, result);
            }
        }
        for handle in handles {
            // A panic in a worker is a bug; surface it on the caller's thread.
            if let Err(payload) = handle.join() {
                std::panic::resume_unwind(payload);
            }
        }
    });
}

/// The mapped chunks not yet consumed, and whether a worker died before mapping its chunk.
struct Done<T, R> {
    chunks: Vec<Option<Vec<(T, R)>>>,
    lost: bool,
}

/// Marks the work lost, and stops the other threads, when its thread unwinds.
struct Alarm<'a, T, R> {
    done: &'a Mutex<Done<T, R>>,
    ready: &'a Condvar,
    stop: &'a AtomicBool,
}

impl<T, R> Drop for Alarm<'_, T, R> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.stop.store(true, Ordering::Relaxed);
            relock(self.done.lock()).lost = true;
            self.ready.notify_all();
        }
    }
}

/// Stops the workers when the calling thread unwinds.
struct Halt<'a>(&'a AtomicBool);

impl Drop for Halt<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

/// A lock whose holder panicked is still usable here: the data is a list of finished chunks.
fn relock<G>(result: Result<G, std::sync::PoisonError<G>>) -> G {
    result.unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn par_map_keeps_order_however_the_chunks_are_shared() {
        for len in [0, 63, 64, 65, 1000, 4099] {
            let items: Vec<usize> = (0..len).collect();
            // Uneven work: the late items cost more, so the workers finish chunks out of order.
            let out = par_map(&items, |&i| {
                if i % 97 == 0 {
                    std::thread::sleep(std::time::Duration::from_micros(50));
                }
                i * 2
            });
            assert_eq!(out, items.iter().map(|i| i * 2).collect::<Vec<_>>(), "{len} items");
        }
    }

    #[test]
    fn par_map_consume_hands_over_every_item_in_order() {
        for len in [0, 63, 64, 65, 1000, 4099] {
            let items: Vec<String> = (0..len).map(|i| i.to_string()).collect();
            let mut seen = Vec::new();
            par_map_consume(
                items.clone(),
                |item| {
                    // Uneven work: chunks finish out of order.
                    if item.ends_with('7') {
                        std::thread::sleep(std::time::Duration::from_micros(30));
                    }
                    item.len()
                },
                |item, len| {
                    assert_eq!(item.len(), len);
                    seen.push(item);
                },
            );
            assert_eq!(seen, items, "{len} items");
        }
    }

    #[test]
    fn a_panic_while_mapping_reaches_the_caller_instead_of_hanging_it() {
        let items: Vec<usize> = (0..5000).collect();
        let outcome = std::panic::catch_unwind(|| {
            par_map_consume(items, |&i| if i == 4321 { panic!("item {i}") } else { i }, |_, _| {})
        });
        assert!(outcome.is_err());
    }

    #[test]
    fn a_panic_while_consuming_stops_the_mapping_of_the_rest() {
        let mapped = AtomicUsize::new(0);
        let items: Vec<usize> = (0..2000).collect();
        let outcome = std::panic::catch_unwind(|| {
            par_map_consume(
                items,
                |&i| {
                    mapped.fetch_add(1, Ordering::Relaxed);
                    std::thread::sleep(std::time::Duration::from_micros(100));
                    i
                },
                |_, _| panic!("the first item"),
            )
        });
        assert!(outcome.is_err());
        // The chunks under way finish; no new ones start.
        assert!(mapped.load(Ordering::Relaxed) < 1000, "{} of 2000 mapped", mapped.load(Ordering::Relaxed));
    }
}
