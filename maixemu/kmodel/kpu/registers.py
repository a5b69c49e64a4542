"""The 12 register words of ``kpu_layer_argument_t`` (kpu-hardware.md §1) decoded into named,
sign-extended fields, with the settings no simulation models rejected at load."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..errors import KmodelFormatError, KmodelUnsupportedError
from .pool import POOL_GEOMETRY, POOL_NAMES
from .ram import layout

def signed(value: int, bits: int) -> int:
    """Two's-complement value of the low ``bits`` bits."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value & (1 << (bits - 1)) else value


def _bits(word: int, lo: int, hi: int) -> int:
    return (word >> lo) & ((1 << (hi - lo + 1)) - 1)


@dataclass(frozen=True)
class KpuRegisters:
    """All fields of ``kpu_layer_argument_t`` (kpu-hardware.md §1), decoded and sign-extended."""

    int_en: int
    ram_flag: int
    full_add: int
    depth_wise_layer: int
    image_src_addr: int
    image_dst_addr: int
    i_ch_num: int
    o_ch_num: int
    o_ch_num_coef: int
    i_row_wid: int
    i_col_high: int
    o_row_wid: int
    o_col_high: int
    kernel_type: int
    pad_type: int
    pool_type: int
    first_stride: int
    bypass_conv: int
    load_para: int
    dma_burst_size: int
    pad_value: int
    bwsx_base_addr: int
    load_coor: int
    load_time: int
    para_size: int
    para_start_addr: int
    coef_column_offset: int
    coef_row_offset: int
    channel_switch_addr: int
    row_switch_addr: int
    coef_size: int
    coef_group: int
    load_act: int
    active_addr: int
    wb_channel_switch_addr: int
    wb_row_switch_addr: int
    wb_group: int
    shr_w: int
    shr_x: int
    arg_w: int
    arg_x: int
    arg_add: int
    send_data_out: int
    channel_byte_num: int
    dma_total_byte: int

    # Derived geometry -----------------------------------------------------------------------
    @property
    def in_channels(self) -> int:
        return self.i_ch_num + 1

    @property
    def out_channels(self) -> int:
        return self.o_ch_num + 1

    @property
    def in_shape(self) -> tuple[int, int, int]:
        return (self.i_ch_num + 1, self.i_col_high + 1, self.i_row_wid + 1)

    @property
    def out_shape(self) -> tuple[int, int, int]:
        return (self.o_ch_num + 1, self.o_col_high + 1, self.o_row_wid + 1)

    @property
    def conv_shape(self) -> tuple[int, int, int]:
        """Shape before pooling (the conv runs at full input resolution, stride 1)."""
        return (self.o_ch_num + 1, self.i_col_high + 1, self.i_row_wid + 1)

    @property
    def kernel_size(self) -> int:
        return 3 if self.kernel_type == 1 else 1

    @property
    def depthwise(self) -> bool:
        return bool(self.depth_wise_layer)

    @property
    def weight_count(self) -> int:
        k = self.kernel_size
        return self.out_channels * (1 if self.depthwise else self.in_channels) * k * k

    @property
    def macs(self) -> int:
        _, h, w = self.in_shape
        return self.weight_count * h * w

    def validate_layout(self, *, offset: int | None = None, strict: bool = True) -> list[str]:
        """Check the redundant layout/DMA fields against the sizes (kpu-hardware.md §1, §7).

        Returns the list of mismatches; raises KmodelFormatError for the first one if ``strict``.
        """
        ic, ih, iw = self.in_shape
        oc, oh, ow = self.out_shape
        gi, rli, _ = layout(iw)
        go, rlo, _ = layout(ow)
        checks = [
            ("channel_switch_addr", self.channel_switch_addr, rli * ih),
            ("row_switch_addr", self.row_switch_addr, rli),
            ("coef_group", self.coef_group, gi),
            ("wb_channel_switch_addr", self.wb_channel_switch_addr, rlo * oh),
            ("wb_row_switch_addr", self.wb_row_switch_addr, rlo),
            ("wb_group", self.wb_group, go),
            ("channel_byte_num", self.channel_byte_num, ow * oh - 1),
            ("dma_total_byte", self.dma_total_byte, ow * oh * oc - 1),
        ]
        window, stride = POOL_GEOMETRY[self.pool_type]
        checks.append(("o_row_wid", ow, iw // stride))
        checks.append(("o_col_high", oh, ih // stride))
        problems = [f"register {name} is {got}, expected {want}" for name, got, want in checks if got != want]
        if problems and strict:
            raise KmodelFormatError(
                f"KPU layer registers disagree with its sizes: {problems[0]}", offset=offset, field=problems[0].split()[1]
            )
        return problems


def decode_registers(words: Sequence[int], *, offset: int | None = None) -> KpuRegisters:
    """Decode the 12 register words; reject settings no simulation models."""
    if len(words) != 12:
        raise KmodelFormatError(f"a KPU layer has 12 register words, got {len(words)}", offset=offset, field="layer registers")
    w = [int(v) & 0xFFFFFFFFFFFFFFFF for v in words]
    b = _bits
    regs = KpuRegisters(
        int_en=b(w[0], 0, 0),
        ram_flag=b(w[0], 1, 1),
        full_add=b(w[0], 2, 2),
        depth_wise_layer=b(w[0], 3, 3),
        image_src_addr=b(w[1], 0, 14),
        image_dst_addr=b(w[1], 32, 46),
        i_ch_num=b(w[2], 0, 9),
        o_ch_num=b(w[2], 32, 41),
        o_ch_num_coef=b(w[2], 48, 57),
        i_row_wid=b(w[3], 0, 9),
        i_col_high=b(w[3], 10, 18),
        o_row_wid=b(w[3], 32, 41),
        o_col_high=b(w[3], 42, 50),
        kernel_type=b(w[4], 0, 2),
        pad_type=b(w[4], 3, 3),
        pool_type=b(w[4], 4, 7),
        first_stride=b(w[4], 8, 8),
        bypass_conv=b(w[4], 9, 9),
        load_para=b(w[4], 10, 10),
        dma_burst_size=b(w[4], 16, 23),
        pad_value=b(w[4], 24, 31),
        bwsx_base_addr=b(w[4], 32, 63),
        load_coor=b(w[5], 0, 0),
        load_time=b(w[5], 1, 6),
        para_size=b(w[5], 15, 31),
        para_start_addr=b(w[5], 32, 63),
        coef_column_offset=b(w[6], 0, 3),
        coef_row_offset=b(w[6], 4, 15),
        channel_switch_addr=b(w[7], 0, 14),
        row_switch_addr=b(w[7], 16, 19),
        coef_size=b(w[7], 20, 27),
        coef_group=b(w[7], 28, 30),
        load_act=b(w[7], 31, 31),
        active_addr=b(w[7], 32, 63),
        wb_channel_switch_addr=b(w[8], 0, 14),
        wb_row_switch_addr=b(w[8], 16, 19),
        wb_group=b(w[8], 20, 22),
        shr_w=b(w[9], 0, 3),
        shr_x=b(w[9], 4, 7),
        arg_w=signed(b(w[9], 8, 31), 24),
        arg_x=signed(b(w[9], 32, 55), 24),
        arg_add=signed(b(w[10], 0, 39), 40),
        send_data_out=b(w[11], 0, 0),
        channel_byte_num=b(w[11], 16, 31),
        dma_total_byte=b(w[11], 32, 63),
    )
    unsupported = [
        ("full_add", regs.full_add, "streams raw sums (SDK helper only)"),
        ("pad_type", regs.pad_type, "unknown padding semantics"),
        ("first_stride", regs.first_stride, "not modelled by any simulation"),
        ("bypass_conv", regs.bypass_conv, "not modelled by any simulation"),
        ("coef_column_offset", regs.coef_column_offset, "not modelled"),
        ("coef_row_offset", regs.coef_row_offset, "not modelled"),
    ]
    for name, value, why in unsupported:
        if value:
            raise KmodelUnsupportedError(f"KPU register {name}={value} is not supported ({why})", offset=offset, field=name)
    if regs.kernel_type not in (0, 1):
        raise KmodelUnsupportedError(f"KPU kernel_type {regs.kernel_type} (only 0=1x1 and 1=3x3 exist)", offset=offset, field="kernel_type")
    if regs.pool_type not in POOL_NAMES:
        raise KmodelUnsupportedError(f"KPU pool_type {regs.pool_type} is undefined", offset=offset, field="pool_type")
    if regs.depthwise and regs.i_ch_num != regs.o_ch_num:
        raise KmodelFormatError(
            f"depthwise KPU layer with {regs.in_channels} input and {regs.out_channels} output channels",
            offset=offset,
            field="depth_wise_layer",
        )
    return regs
