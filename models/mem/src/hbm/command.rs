//! DRAM commands and the command record a controller emits for every command it issues.

use serde::{Deserialize, Serialize};

/// A DRAM command as HBM2/HBM3 define them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[repr(u8)]
pub enum Command {
    /// Activate: open a row in a bank (row command bus, 1.5 CK on HBM3).
    Act = 0,
    /// Precharge one bank (row bus, 0.5 CK).
    Pre = 1,
    /// Precharge all banks of the pseudo-channel (row bus, 0.5 CK).
    PreAll = 2,
    /// Read burst from the open row (column command bus).
    Rd = 3,
    /// Write burst to the open row (column bus).
    Wr = 4,
    /// Read with auto-precharge.
    RdA = 5,
    /// Write with auto-precharge.
    WrA = 6,
    /// All-bank refresh of the pseudo-channel (row bus); every bank must be precharged.
    Ref = 7,
    /// Per-bank refresh (row bus); the bank must be precharged.
    RefPb = 8,
}

impl Command {
    /// Number of command kinds.
    pub const COUNT: usize = 9;
    /// Every command, in discriminant order.
    pub const ALL: [Command; 9] = [
        Command::Act,
        Command::Pre,
        Command::PreAll,
        Command::Rd,
        Command::Wr,
        Command::RdA,
        Command::WrA,
        Command::Ref,
        Command::RefPb,
    ];

    /// The JEDEC-style mnemonic used in command traces.
    pub fn name(self) -> &'static str {
        match self {
            Command::Act => "ACT",
            Command::Pre => "PRE",
            Command::PreAll => "PREA",
            Command::Rd => "RD",
            Command::Wr => "WR",
            Command::RdA => "RDA",
            Command::WrA => "WRA",
            Command::Ref => "REF",
            Command::RefPb => "REFPB",
        }
    }

    /// The statistic counting this command's issues, `cmd_<name>`.
    pub fn counter_name(self) -> &'static str {
        match self {
            Command::Act => "cmd_ACT",
            Command::Pre => "cmd_PRE",
            Command::PreAll => "cmd_PREA",
            Command::Rd => "cmd_RD",
            Command::Wr => "cmd_WR",
            Command::RdA => "cmd_RDA",
            Command::WrA => "cmd_WRA",
            Command::Ref => "cmd_REF",
            Command::RefPb => "cmd_REFPB",
        }
    }

    /// Parses a mnemonic written by [`Command::name`].
    pub fn from_name(s: &str) -> Option<Command> {
        Command::ALL.into_iter().find(|c| c.name() == s)
    }

    /// True for commands on the column bus (RD, WR, RDA, WRA); the rest use the row bus.
    pub fn is_column(self) -> bool {
        matches!(self, Command::Rd | Command::Wr | Command::RdA | Command::WrA)
    }
    /// True for reads (RD, RDA).
    pub fn is_read(self) -> bool {
        matches!(self, Command::Rd | Command::RdA)
    }
    /// True for writes (WR, WRA).
    pub fn is_write(self) -> bool {
        matches!(self, Command::Wr | Command::WrA)
    }
    /// Row-bus occupancy in half CK cycles (HBM3: ACT takes 3 half-cycles, PRE/REF one);
    /// column commands occupy the column bus for 2 half-cycles (one CK).
    pub fn bus_half_cycles(self) -> u64 {
        match self {
            Command::Act => 3,
            c if c.is_column() => 2,
            _ => 1,
        }
    }
    /// This command as a one-bit set.
    pub fn bit(self) -> u16 {
        1 << self as u16
    }
}

/// A set of commands as a bit mask (bit `c as u16`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CmdSet(pub u16);

impl CmdSet {
    /// The set of the listed commands.
    pub const fn of(cmds: &[Command]) -> CmdSet {
        let mut m = 0u16;
        let mut i = 0;
        while i < cmds.len() {
            m |= 1 << cmds[i] as u16;
            i += 1;
        }
        CmdSet(m)
    }
    /// True if `c` is in the set.
    pub fn contains(self, c: Command) -> bool {
        self.0 & c.bit() != 0
    }
    /// The members, in discriminant order.
    pub fn iter(self) -> impl Iterator<Item = Command> {
        Command::ALL.into_iter().filter(move |c| self.contains(*c))
    }
}

/// One issued command, as a controller records it and the checker replays it.
///
/// `cycle` counts CK cycles of the memory clock from time zero. Addresses are per level; `row`
/// is meaningful for ACT, `column` (burst index in the row) for column commands, and bank
/// fields are ignored for PREA and REF.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CommandRecord {
    /// CK cycle the command was issued in.
    pub cycle: u64,
    /// Stack index.
    pub stack: u32,
    /// Channel within the stack.
    pub channel: u32,
    /// Pseudo-channel within the channel.
    pub pc: u32,
    /// The command.
    pub cmd: Command,
    /// Stack ID.
    pub sid: u32,
    /// Bank group within the SID.
    pub bank_group: u32,
    /// Bank within the group.
    pub bank: u32,
    /// Row (ACT; the open row for column commands).
    pub row: u32,
    /// Burst index in the row (column commands).
    pub column: u32,
}

impl CommandRecord {
    /// The record as one command-trace line (no newline):
    /// `cycle stack channel pc CMD sid bank_group bank row column`.
    pub fn to_line(&self) -> String {
        format!(
            "{} {} {} {} {} {} {} {} {} {}",
            self.cycle,
            self.stack,
            self.channel,
            self.pc,
            self.cmd.name(),
            self.sid,
            self.bank_group,
            self.bank,
            self.row,
            self.column
        )
    }
}

/// Where a controller sends the commands it issues (a command trace recorder, a checker, or
/// nothing). Called once per issued command; implementations must not affect timing.
pub trait CommandSink: std::any::Any {
    /// One command was issued.
    fn command(&mut self, rec: &CommandRecord);
}

impl CommandSink for Vec<CommandRecord> {
    fn command(&mut self, rec: &CommandRecord) {
        self.push(*rec);
    }
}
