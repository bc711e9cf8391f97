//! The refresh schedule across pseudo-channels: `staggered` (the default) spreads the
//! pseudo-channels' refreshes evenly over the interval; `simultaneous` (Ramulator 2's and
//! DRAMsim3's) has every pseudo-channel's refresh fall due in the same cycle, one interval after
//! cycle 0.

use crate::hbm::command::{Command, CommandRecord};
use crate::hbm::refresh::RefreshSchedule;
use crate::hbm::{presets, HbmStack, StackConfig};

/// The cycles of every refresh command an idle stack issues up to `cycle`, per
/// pseudo-channel (channel-major).
fn refresh_cycles(refresh: &str, schedule: RefreshSchedule, cycle: u64) -> Vec<Vec<u64>> {
    let mut cfg = StackConfig::from_preset(&presets::HBM3_6400);
    cfg.controller.refresh = refresh.into();
    cfg.controller.refresh_schedule = schedule;
    let mut stack = HbmStack::new(&cfg).unwrap();
    stack.set_command_sink(Box::new(Vec::<CommandRecord>::new()));
    stack.catch_up_to(cycle);
    let sink: Box<dyn std::any::Any> = stack.take_command_sink().unwrap();
    let cmds = sink.downcast::<Vec<CommandRecord>>().unwrap();
    let pcs = cfg.org.pseudo_channels;
    let mut out = vec![Vec::new(); cfg.org.pcs() as usize];
    for c in cmds.iter().filter(|c| matches!(c.cmd, Command::Ref | Command::RefPb)) {
        out[(c.channel * pcs + c.pc) as usize].push(c.cycle);
    }
    out
}

#[test]
fn the_default_schedule_is_staggered() {
    assert_eq!(StackConfig::from_preset(&presets::HBM3_6400).controller.refresh_schedule, RefreshSchedule::Staggered);
}

#[test]
fn simultaneous_refreshes_every_pseudo_channel_in_the_same_cycle() {
    let t = presets::HBM3_6400.timing.clone();
    for (policy, interval) in [("all-bank", u64::from(t.refi)), ("per-bank", u64::from(t.refi_pb))] {
        let end = 4 * interval + 8;
        let per_pc = refresh_cycles(policy, RefreshSchedule::Simultaneous, end);
        // Every pseudo-channel falls due at the same cycles; the two of a channel share its
        // row bus, so the second one's refresh goes one cycle after the first's.
        for (k, cycles) in per_pc.iter().enumerate() {
            let pc = (k % 2) as u64;
            let want: Vec<u64> = (1..=4).map(|n| n * interval + pc).collect();
            assert_eq!(cycles, &want, "{policy}: pseudo-channel {k}");
        }
    }
}

#[test]
fn staggered_spreads_the_pseudo_channels_over_the_interval() {
    let t = presets::HBM3_6400.timing.clone();
    for (policy, interval) in [("all-bank", u64::from(t.refi)), ("per-bank", u64::from(t.refi_pb))] {
        let per_pc = refresh_cycles(policy, RefreshSchedule::Staggered, 2 * interval);
        let mut firsts: Vec<u64> = per_pc.iter().map(|c| c[0]).collect();
        let n = firsts.len() as u64;
        firsts.sort_unstable();
        firsts.dedup();
        assert_eq!(firsts.len() as u64, n, "{policy}: every pseudo-channel its own cycle");
        for (k, f) in firsts.iter().enumerate() {
            assert_eq!(*f, interval + k as u64 * interval / n, "{policy}: offset {k}");
        }
    }
}
