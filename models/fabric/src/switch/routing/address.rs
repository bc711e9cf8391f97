//! Address routing: Trn3 switches route on the (rack, server, chip) bits of the destination
//! address (spec §6: "the (rack, server, chip) identity is in the upper address bits and
//! switches match on BARs"). Here the destination id of a [`Packet`] stands for those upper
//! address bits; [`AddressFields`] says, as data, which bits hold which field.
//!
//! A switch sits at one [`Level`] of the hierarchy and owns one subtree: a server switch one
//! server's chips, a rack switch one rack's servers, a top switch all racks. A packet whose
//! destination lies in the subtree goes down the port of the next field (the chip's port at the
//! server level, the server's at the rack level, the rack's at the top); any other goes up.
//!
//! **Uplink rule.** With `u` uplinks, a packet leaving the subtree takes uplink
//! `uplinks[dst % u]` (`dst` the whole destination id): a fixed choice per destination, which
//! spreads destinations over the uplinks and keeps every packet to one destination on one path,
//! so a data write and its semaphore write stay in order (spec §6). No uplinks: unroutable.
//!
//! Leaves out: real BAR matching on 64-bit addresses (base/limit windows), adaptive uplink
//! choice, and multicast.

use super::Routing;
use crate::switch::config::ConfigError;
use crate::switch::Packet;

/// A bit field of the destination id: `width` bits from bit `shift` (bit 0 = least
/// significant).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BitField {
    /// Lowest bit.
    pub shift: u8,
    /// Number of bits (0 = the field is always 0).
    pub width: u8,
}

impl BitField {
    /// The field's value in `id`.
    pub fn get(self, id: u16) -> u32 {
        let mask = (1u32 << self.width) - 1;
        (u32::from(id) >> self.shift) & mask
    }
    /// `value` placed in the field (bits above the width are dropped).
    pub fn put(self, value: u32) -> u16 {
        let mask = (1u32 << self.width) - 1;
        ((value & mask) << self.shift) as u16
    }
    fn bits(self) -> u32 {
        ((1u32 << self.width) - 1) << self.shift
    }
}

/// Where the rack, server and chip numbers sit in a destination id (16 bits, fields must not
/// overlap).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddressFields {
    /// Rack number.
    pub rack: BitField,
    /// Server number within the rack.
    pub server: BitField,
    /// Chip number within the server.
    pub chip: BitField,
}

impl AddressFields {
    /// Trn3 Gen1 (NL32x2: 2 racks x 2 servers x 16 chips, E): chip bits 0..4, server bits 4..5,
    /// rack bit 5. Dense, so ids 0..64 are the 64 chips in order.
    pub const TRN3_GEN1: AddressFields = AddressFields {
        chip: BitField { shift: 0, width: 4 },
        server: BitField { shift: 4, width: 1 },
        rack: BitField { shift: 5, width: 1 },
    };

    /// Dense fields: chip in the low `chip_bits`, then `server_bits`, then `rack_bits`.
    pub fn dense(rack_bits: u8, server_bits: u8, chip_bits: u8) -> AddressFields {
        AddressFields {
            chip: BitField { shift: 0, width: chip_bits },
            server: BitField { shift: chip_bits, width: server_bits },
            rack: BitField { shift: chip_bits + server_bits, width: rack_bits },
        }
    }

    /// The (rack, server, chip) of a destination id.
    pub fn split(&self, id: u16) -> (u32, u32, u32) {
        (self.rack.get(id), self.server.get(id), self.chip.get(id))
    }

    /// The destination id of (rack, server, chip).
    pub fn join(&self, rack: u32, server: u32, chip: u32) -> u16 {
        self.rack.put(rack) | self.server.put(server) | self.chip.put(chip)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        let fs = [("rack", self.rack), ("server", self.server), ("chip", self.chip)];
        let mut used = 0u32;
        for (name, f) in fs {
            if u32::from(f.shift) + u32::from(f.width) > 16 {
                return Err(bad(
                    "routing.address.fields",
                    format!("{name} bits {}..{}", f.shift, f.shift + f.width),
                    "within 16 bits",
                ));
            }
            if used & f.bits() != 0 {
                return Err(bad("routing.address.fields", format!("{name} overlaps another field"), "disjoint fields"));
            }
            used |= f.bits();
        }
        Ok(())
    }
}

/// Which subtree a switch owns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// One server's chips: down by chip number when (rack, server) match.
    Server {
        /// The rack.
        rack: u32,
        /// The server within the rack.
        server: u32,
    },
    /// One rack's servers: down by server number when the rack matches.
    Rack {
        /// The rack.
        rack: u32,
    },
    /// Every rack: down by rack number, never up.
    Top,
}

/// One switch's address routing, as data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddressRouting {
    /// The destination id's bit fields.
    pub fields: AddressFields,
    /// The subtree this switch owns.
    pub level: Level,
    /// `down[k]`: the port towards child `k` (chip, server or rack number, per the level);
    /// `None` or past the end: no route.
    pub down: Vec<Option<u16>>,
    /// Ports towards the parent level (see the module docs for the rule).
    pub uplinks: Vec<u16>,
}

fn bad(field: &'static str, value: impl Into<String>, allowed: &str) -> ConfigError {
    ConfigError::BadField { field, value: value.into(), allowed: allowed.into() }
}

impl AddressRouting {
    /// Routing for a switch of `ports` ports; every port named must be below `ports`.
    pub fn new(
        fields: AddressFields,
        level: Level,
        down: Vec<Option<u16>>,
        uplinks: Vec<u16>,
        ports: u16,
    ) -> Result<AddressRouting, ConfigError> {
        fields.validate()?;
        if let Some(p) = down.iter().flatten().chain(&uplinks).find(|&&p| p >= ports) {
            return Err(bad("routing.address.ports", format!("port {p}"), &format!("ports below {ports}")));
        }
        Ok(AddressRouting { fields, level, down, uplinks })
    }

    fn up(&self, dst: u16) -> Option<u16> {
        (!self.uplinks.is_empty()).then(|| self.uplinks[usize::from(dst) % self.uplinks.len()])
    }
}

impl Routing for AddressRouting {
    fn name(&self) -> &'static str {
        "address"
    }
    fn route(&self, pkt: &Packet) -> Option<u16> {
        let (rack, server, chip) = self.fields.split(pkt.dst);
        let child = match self.level {
            Level::Server { rack: r, server: s } if (r, s) == (rack, server) => chip,
            Level::Rack { rack: r } if r == rack => server,
            Level::Top => rack,
            _ => return self.up(pkt.dst),
        };
        self.down.get(child as usize).copied().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trnsim_kernel::Time;

    fn pkt(dst: u16) -> Packet {
        Packet { src: 0, dst, flow: 0, seq: 0, bytes: 64, created: Time::ZERO }
    }

    /// Two servers of 4 chips in one rack: chip bits 0..2, server bit 2, rack bit 3.
    fn two_servers() -> AddressFields {
        AddressFields::dense(1, 1, 2)
    }

    #[test]
    fn fields_split_and_join() {
        let f = AddressFields::TRN3_GEN1;
        assert_eq!(f.split(0b10_0111), (1, 0, 7)); // rack 1, server 0, chip 7
        assert_eq!(f.join(1, 1, 15), 63);
        for id in 0..64 {
            let (r, s, c) = f.split(id);
            assert_eq!(f.join(r, s, c), id);
        }
        assert_eq!(two_servers().split(6), (0, 1, 2));
    }

    #[test]
    fn server_switch_routes_local_chips_down_and_the_rest_up() {
        // Server 1's switch: chips on ports 0..4, two uplinks on ports 4 and 5.
        let f = two_servers();
        let r = AddressRouting::new(f, Level::Server { rack: 0, server: 1 }, (0..4).map(Some).collect(), vec![4, 5], 6)
            .unwrap();
        assert_eq!(r.name(), "address");
        // Local chips 4..8 go to their ports.
        assert_eq!((4..8).map(|d| r.route(&pkt(d))).collect::<Vec<_>>(), [Some(0), Some(1), Some(2), Some(3)]);
        // Server 0's chips (ids 0..4) go up, uplink dst % 2: the same destination always the same.
        assert_eq!((0..4).map(|d| r.route(&pkt(d))).collect::<Vec<_>>(), [Some(4), Some(5), Some(4), Some(5)]);
        // Another rack (rack bit set) also goes up.
        assert_eq!(r.route(&pkt(f.join(1, 1, 1))), Some(5));
        // Without uplinks it is unroutable.
        let leaf = AddressRouting::new(f, Level::Server { rack: 0, server: 1 }, (0..4).map(Some).collect(), vec![], 4)
            .unwrap();
        assert_eq!(leaf.route(&pkt(0)), None);
    }

    #[test]
    fn rack_and_top_switches_route_by_server_and_rack() {
        let f = two_servers();
        let rack = AddressRouting::new(f, Level::Rack { rack: 0 }, vec![Some(3), Some(7)], vec![9], 10).unwrap();
        assert_eq!([0, 3, 4, 7].map(|d| rack.route(&pkt(d))), [Some(3), Some(3), Some(7), Some(7)]);
        assert_eq!(rack.route(&pkt(f.join(1, 0, 0))), Some(9));
        let top = AddressRouting::new(f, Level::Top, vec![Some(0), None], vec![], 2).unwrap();
        assert_eq!([0, 7, 8].map(|d| top.route(&pkt(d))), [Some(0), Some(0), None]);
    }

    #[test]
    fn bad_configs_name_the_field() {
        let f = two_servers();
        let e = AddressRouting::new(f, Level::Top, vec![Some(4)], vec![], 4).unwrap_err();
        assert!(e.to_string().contains("routing.address.ports"), "{e}");
        let overlap = AddressFields { chip: BitField { shift: 0, width: 3 }, ..f };
        let e = AddressRouting::new(overlap, Level::Top, vec![], vec![], 4).unwrap_err();
        assert!(e.to_string().contains("overlaps"), "{e}");
        let wide = AddressFields { rack: BitField { shift: 14, width: 4 }, ..f };
        assert!(AddressRouting::new(wide, Level::Top, vec![], vec![], 4).is_err());
    }
}
