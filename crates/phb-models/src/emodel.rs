//! The E-model: the transmission rating factor `R` of a voice connection.
//!
//! ITU-T Recommendation G.107, "The E-model, a computational model for use
//! in transmission planning" (the 2005 and later editions, whose
//! packet-loss term uses the robustness factor `Bpl`), with the codec
//! values of ITU-T G.113 Appendix I. The BEDS paper (Firoiu, Zhang, Guo,
//! ICT 2001, Section III.B and Fig. 11) reads it as `R = R_0 − I_d − I_e`:
//! the basic quality, less the delay and the codec-and-loss impairments.
//!
//! ```text
//! R = Ro − Is − Id − Ie,eff + A
//! ```
//!
//! - `Ro = 15 − 1.5·(SLR + No)`, the basic signal-to-noise ratio, `No` the
//!   power sum of the circuit noise `Nc`, the room noise at the send side
//!   `Nos` and at the receive side `Nor`, and the noise floor `Nfo`;
//! - `Is = Iolr + Ist + Iq`, impairments simultaneous with the voice (too
//!   loud a connection, sidetone, quantization);
//! - `Id = Idte + Idle + Idd`, delay impairments: talker echo (echo loss
//!   `TELR` at mean one-way delay `T`), listener echo (`WEPL` at round-trip
//!   `Tr`) and the absolute delay `Ta` itself (`Idd`, 0 up to 100 ms);
//! - `Ie,eff = Ie + (95 − Ie)·Ppl/(Ppl/BurstR + Bpl)`, the codec's
//!   impairment `Ie` raised by the packet loss `Ppl` (percent) as its
//!   robustness `Bpl` allows (`BurstR = 1`: random loss);
//! - `A`, the advantage factor (0: wired).
//!
//! With every parameter at G.107's default (Table 3: SLR 8 dB, RLR 2 dB,
//! STMR 15 dB, LSTR 18 dB, Ds = Dr = 3, TELR 65 dB, WEPL 110 dB, T = Tr =
//! Ta = 0, qdu 1, Ie 0, Ppl 0, Nc −70 dBm0p, Nfor −64 dBmp, Ps = Pr = 35
//! dB(A), A = 0), `R = 93.2` ([`EModel::default`]).
//!
//! [`voip_r`] is the paper's use: a one-way network delay `d` taken as the
//! mean one-way delay and the absolute delay (`T = Ta = d`), the listener
//! echo loop twice that (`Tr = 2d`), random loss, every other parameter at
//! its default.

/// A codec's equipment impairment `Ie` and packet-loss robustness `Bpl`,
/// ITU-T G.113 (11/2007) Appendix I, Tables I.1 and I.3 (random loss).
/// Through G.107's formula they give the `Ie` at 2% loss that the
/// tabulated planning values of the earlier editions (1998, 2001) gave: 24
/// for G.723.1, 19 for G.729A, 7 for G.711 with concealment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Codec {
    pub name: &'static str,
    /// `Ie` without loss.
    pub ie: f64,
    /// `Bpl`.
    pub bpl: f64,
}

impl Codec {
    /// G.711 (64 kb/s PCM) with packet loss concealment: `Ie = 0`, `Bpl = 25.1`.
    pub const G711: Codec = Codec { name: "g711", ie: 0.0, bpl: 25.1 };
    /// G.711 without concealment: `Ie = 0`, `Bpl = 4.3`.
    pub const G711_NO_PLC: Codec = Codec { name: "g711_no_plc", ie: 0.0, bpl: 4.3 };
    /// G.723.1 at 6.3 kb/s (with VAD): `Ie = 15`, `Bpl = 16.1`.
    pub const G723_1: Codec = Codec { name: "g723.1", ie: 15.0, bpl: 16.1 };
    /// G.729A (with VAD): `Ie = 11`, `Bpl = 19.0`.
    pub const G729A: Codec = Codec { name: "g729a", ie: 11.0, bpl: 19.0 };

    /// Every codec above.
    pub const ALL: [Codec; 4] = [Codec::G711, Codec::G711_NO_PLC, Codec::G723_1, Codec::G729A];

    /// The codec called `name` (as [`Codec::name`]).
    pub fn by_name(name: &str) -> Option<Codec> {
        Codec::ALL.into_iter().find(|c| c.name == name)
    }
}

/// G.107's parameters, named as the Recommendation names them (Table 1);
/// delays in milliseconds, the loss `ppl` in percent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EModel {
    /// Send loudness rating, dB.
    pub slr: f64,
    /// Receive loudness rating, dB.
    pub rlr: f64,
    /// Sidetone masking rating, dB.
    pub stmr: f64,
    /// Listener sidetone rating, dB.
    pub lstr: f64,
    /// D-value of the telephone, send side.
    pub ds: f64,
    /// D-value of the telephone, receive side.
    pub dr: f64,
    /// Talker echo loudness rating, dB.
    pub telr: f64,
    /// Weighted echo path loss, dB.
    pub wepl: f64,
    /// Mean one-way delay of the echo path, ms.
    pub t: f64,
    /// Round-trip delay in a 4-wire loop, ms.
    pub tr: f64,
    /// Absolute delay in echo-free connections, ms.
    pub ta: f64,
    /// Quantization distortion units.
    pub qdu: f64,
    /// Equipment impairment factor.
    pub ie: f64,
    /// Packet-loss robustness factor.
    pub bpl: f64,
    /// Random packet-loss probability, percent.
    pub ppl: f64,
    /// Burst ratio (1: random loss).
    pub burst_r: f64,
    /// Circuit noise referred to the 0 dBr point, dBm0p.
    pub nc: f64,
    /// Noise floor at the receive side, dBmp.
    pub nfor: f64,
    /// Room noise at the send side, dB(A).
    pub ps: f64,
    /// Room noise at the receive side, dB(A).
    pub pr: f64,
    /// Advantage factor.
    pub a: f64,
}

impl Default for EModel {
    /// G.107's default values (its Table 3).
    fn default() -> EModel {
        EModel {
            slr: 8.0,
            rlr: 2.0,
            stmr: 15.0,
            lstr: 18.0,
            ds: 3.0,
            dr: 3.0,
            telr: 65.0,
            wepl: 110.0,
            t: 0.0,
            tr: 0.0,
            ta: 0.0,
            qdu: 1.0,
            ie: 0.0,
            bpl: 1.0,
            ppl: 0.0,
            burst_r: 1.0,
            nc: -70.0,
            nfor: -64.0,
            ps: 35.0,
            pr: 35.0,
            a: 0.0,
        }
    }
}

/// The terms of `R`, for inspection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rating {
    pub ro: f64,
    pub is: f64,
    pub id: f64,
    pub ie_eff: f64,
    pub a: f64,
    /// `R = Ro − Is − Id − Ie,eff + A`.
    pub r: f64,
}

fn db_sum(levels: &[f64]) -> f64 {
    10.0 * levels.iter().map(|l| 10f64.powf(l / 10.0)).sum::<f64>().log10()
}

impl EModel {
    /// `No`, the total noise power, dBm0p.
    fn no(&self) -> f64 {
        let olr = self.slr + self.rlr;
        let nos = self.ps - self.slr - self.ds - 100.0 + 0.004 * (self.ps - olr - self.ds - 14.0).powi(2);
        let pre = self.pr + 10.0 * (1.0 + 10f64.powf((10.0 - self.lstr) / 10.0)).log10();
        let nor = self.rlr - 121.0 + pre + 0.008 * (pre - 35.0).powi(2);
        let nfo = self.nfor + self.rlr;
        db_sum(&[self.nc, nos, nor, nfo])
    }

    /// `R` and its terms.
    pub fn rating(&self) -> Rating {
        let no = self.no();
        let olr = self.slr + self.rlr;
        let ro = 15.0 - 1.5 * (self.slr + no);

        // Is: loudness, sidetone, quantization.
        let xolr = olr + 0.2 * (64.0 + no - self.rlr);
        let iolr = 20.0 * ((1.0 + (xolr / 8.0).powi(8)).powf(1.0 / 8.0) - xolr / 8.0);
        let stmro =
            -10.0 * (10f64.powf(-self.stmr / 10.0) + (-self.t / 4.0).exp() * 10f64.powf(-self.telr / 10.0)).log10();
        let ist = 12.0 * (1.0 + ((stmro - 13.0) / 6.0).powi(8)).powf(1.0 / 8.0)
            - 28.0 * (1.0 + ((stmro + 1.0) / 19.4).powi(35)).powf(1.0 / 35.0)
            - 13.0 * (1.0 + ((stmro - 3.0) / 33.0).powi(13)).powf(1.0 / 13.0)
            + 29.0;
        let q = 37.0 - 15.0 * self.qdu.log10();
        let g = 1.07 + 0.258 * q + 0.0602 * q * q;
        let y = (ro - 100.0) / 15.0 + 46.0 / 8.4 - g / 9.0;
        let z = 46.0 / 30.0 - g / 40.0;
        let iq = 15.0 * (1.0 + 10f64.powf(y) + 10f64.powf(z)).log10();
        let is = iolr + ist + iq;

        // Id: talker echo, listener echo, absolute delay.
        let terv = self.telr - 40.0 * ((1.0 + self.t / 10.0) / (1.0 + self.t / 150.0)).log10()
            + 6.0 * (-0.3 * self.t * self.t).exp();
        let terv = if self.stmr < 9.0 { terv + ist / 2.0 } else { terv };
        let roe = -1.5 * (no - self.rlr);
        let re = 80.0 + 2.5 * (terv - 14.0);
        let idte = ((roe - re) / 2.0 + ((roe - re).powi(2) / 4.0 + 100.0).sqrt() - 1.0) * (1.0 - (-self.t).exp());
        let rle = 10.5 * (self.wepl + 7.0) * (self.tr + 1.0).powf(-0.25);
        let idle = (ro - rle) / 2.0 + ((ro - rle).powi(2) / 4.0 + 169.0).sqrt();
        let idd = if self.ta <= 100.0 {
            0.0
        } else {
            let x = (self.ta / 100.0).log10() / 2f64.log10();
            25.0 * ((1.0 + x.powi(6)).powf(1.0 / 6.0) - 3.0 * (1.0 + (x / 3.0).powi(6)).powf(1.0 / 6.0) + 2.0)
        };
        let id = idte + idle + idd;

        let ie_eff = self.ie + (95.0 - self.ie) * self.ppl / (self.ppl / self.burst_r + self.bpl);
        let r = ro - is - id - ie_eff + self.a;
        Rating { ro, is, id, ie_eff, a: self.a, r }
    }

    /// `R`.
    pub fn r(&self) -> f64 {
        self.rating().r
    }
}

/// `R` of a voice call over a network with one-way delay `delay_s` (s) and
/// random packet loss `loss` (a fraction) for `codec`: `T = Ta = delay`,
/// `Tr = 2·delay`, every other parameter at G.107's default.
pub fn voip_r(delay_s: f64, loss: f64, codec: Codec) -> f64 {
    let ms = delay_s * 1000.0;
    EModel { t: ms, tr: 2.0 * ms, ta: ms, ie: codec.ie, bpl: codec.bpl, ppl: 100.0 * loss, ..EModel::default() }.r()
}

/// The mean opinion score G.107 Annex B estimates from `R`:
/// `1 + 0.035·R + R·(R − 60)·(100 − R)·7·10⁻⁶` for `0 < R < 100`, 1 below,
/// 4.5 above.
pub fn mos(r: f64) -> f64 {
    if r <= 0.0 {
        1.0
    } else if r >= 100.0 {
        4.5
    } else {
        1.0 + 0.035 * r + r * (r - 60.0) * (100.0 - r) * 7e-6
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// G.107's defaults give R = 93.2: Ro = 94.769, Is = 1.414 (Iolr 0.440,
    /// Ist −0.001, Iq 0.974), Id = 0.149 (listener echo only), Ie,eff = 0.
    #[test]
    fn the_default_connection_rates_93_2() {
        let r = EModel::default().rating();
        assert!((r.r - 93.2).abs() < 0.01, "{r:?}");
        assert!((r.ro - 94.769).abs() < 1e-3 && (r.is - 1.414).abs() < 1e-3, "{r:?}");
        assert!((r.id - 0.149).abs() < 1e-3 && r.ie_eff == 0.0, "{r:?}");
        assert!((voip_r(0.0, 0.0, Codec::G711) - r.r).abs() < 1e-12);
        assert!((mos(r.r) - 4.41).abs() < 0.005, "{}", mos(r.r));
    }

    /// Ie,eff by hand: G.723.1 at 2% loss, 15 + 80·2/(2 + 16.1) = 23.84;
    /// G.711 with concealment at 2%, 95·2/27.1 = 7.01 (G.113's planning
    /// tables: 24 and 7).
    #[test]
    fn loss_raises_the_codec_impairment() {
        let ie =
            |codec: Codec, ppl: f64| EModel { ie: codec.ie, bpl: codec.bpl, ppl, ..EModel::default() }.rating().ie_eff;
        assert!((ie(Codec::G723_1, 2.0) - (15.0 + 80.0 * 2.0 / 18.1)).abs() < 1e-12);
        assert!((ie(Codec::G723_1, 2.0) - 24.0).abs() < 0.2);
        assert!((ie(Codec::G711, 2.0) - 7.0).abs() < 0.02);
        assert!((ie(Codec::G729A, 2.0) - 19.0).abs() < 1e-9);
        assert_eq!(Codec::by_name("g723.1"), Some(Codec::G723_1));
        assert_eq!(Codec::by_name("g722"), None);
    }

    /// Section III.B: "for a subjective quality above 60, G.723.1 can
    /// sustain up to 4% loss and up to 100 ms delay" — R(100 ms, 4%) is
    /// 59.7, and falls with more delay or loss. Idd starts above 100 ms.
    #[test]
    fn the_paper_s_reading_of_fig_11() {
        let r = voip_r(0.1, 0.04, Codec::G723_1);
        assert!((r - 59.7).abs() < 0.1, "{r}");
        assert!(voip_r(0.05, 0.02, Codec::G723_1) > 60.0);
        assert!(voip_r(0.15, 0.04, Codec::G723_1) < r && voip_r(0.1, 0.08, Codec::G723_1) < r);
        assert!(voip_r(0.1, 0.04, Codec::G711) > r + 15.0);
        let idd = |ta: f64| EModel { ta, ..EModel::default() }.rating().id - EModel::default().rating().id;
        assert_eq!(idd(100.0), 0.0);
        assert!(idd(200.0) > 0.0);
    }

    #[test]
    fn mos_maps_r_to_1_through_4_5() {
        assert_eq!(mos(-5.0), 1.0);
        assert_eq!(mos(120.0), 4.5);
        assert!((mos(60.0) - 3.1).abs() < 1e-12);
        assert!((mos(50.0) - (1.0 + 1.75 - 50.0 * 10.0 * 50.0 * 7e-6)).abs() < 1e-12);
    }
}
