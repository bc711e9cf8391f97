//! Table routing: destination id → output port, as data.

use super::Routing;
use crate::switch::config::ConfigError;
use crate::switch::Packet;

/// Routes by looking the destination id up in a table (`table[dst]` = output port; ids past
/// the end or mapped to `None` have no route).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableRouting {
    table: Vec<Option<u16>>,
}

impl TableRouting {
    /// A table for a switch of `ports` ports; every entry must name a port below `ports`.
    pub fn new(table: Vec<Option<u16>>, ports: u16) -> Result<TableRouting, ConfigError> {
        if let Some((dst, p)) = table.iter().enumerate().find_map(|(d, p)| p.filter(|&p| p >= ports).map(|p| (d, p))) {
            return Err(ConfigError::BadField {
                field: "routing.table",
                value: format!("destination {dst} -> port {p}"),
                allowed: format!("ports below {ports}"),
            });
        }
        Ok(TableRouting { table })
    }
    /// Destination `d` leaves by port `d`, for `d` in `0..ports` (one endpoint per port).
    pub fn identity(ports: u16) -> TableRouting {
        TableRouting { table: (0..ports).map(Some).collect() }
    }
    /// The table.
    pub fn table(&self) -> &[Option<u16>] {
        &self.table
    }
}

impl Routing for TableRouting {
    fn name(&self) -> &'static str {
        "table"
    }
    fn route(&self, pkt: &Packet) -> Option<u16> {
        self.table.get(usize::from(pkt.dst)).copied().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trnsim_kernel::Time;

    fn pkt(dst: u16) -> Packet {
        Packet { src: 0, dst, flow: 0, seq: 0, bytes: 64, created: Time::ZERO }
    }

    #[test]
    fn routes_by_destination_and_rejects_bad_tables() {
        let r = TableRouting::new(vec![Some(3), None, Some(0)], 4).unwrap();
        assert_eq!([0, 1, 2, 9].map(|d| r.route(&pkt(d))), [Some(3), None, Some(0), None]);
        assert_eq!(TableRouting::identity(4).route(&pkt(2)), Some(2));
        let e = TableRouting::new(vec![Some(4)], 4).unwrap_err();
        assert!(e.to_string().contains("routing.table"), "{e}");
    }
}
