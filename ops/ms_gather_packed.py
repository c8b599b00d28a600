"""Operators: onnxruntime's com.microsoft GatherPacked (GGML block-packed embeddings).

GatherPacked(data, indices) -> output gathers rows of a 2-D uint8 table
data [vocab, row_bytes], each row the K values of one embedding packed in a GGML tensor
format, and dequantizes them: output has indices' shape + [K] and the type output_dtype
(TensorProto 1 float, 10 float16, 16 bfloat16, the default). packed_type is a GGML
tensor type id. Semantics measured against onnxruntime 1.32's CPU kernel:

* row_bytes must be K / block * block_bytes exactly (anything else is refused at run
  time), K a positive multiple of the format's block size (refused when the node is
  built otherwise). Formats (block elements, block bytes), all little-endian, every
  float16 scale d widened to float32 exactly:
  F32 0 (1, 4), F16 1 (1, 2), BF16 30 (1, 2) hold the values themselves.
  Q4_0 2 (32, 18): d, then 16 bytes; byte j holds value j in its low nibble and value
  j + 16 in its high one (the "nibble order" below); value = (code - 8) * d.
  Q5_0 6 (32, 22): d, a uint32 of fifth bits (bit i for value i), 16 nibble bytes;
  value = (code - 16) * d.
  Q8_0 8 (32, 34): d, then 32 int8 codes; value = code * d.
  Q5_K 13 (256, 176): d and dmin, 12 bytes of eight 6-bit (scale, min) pairs, 32 bytes
  of fifth bits, 128 nibble bytes; value = (d * scale) * code - dmin * min.
  Q6_K 14 (256, 210): 128 bytes of low nibbles, 64 of high bit pairs, 16 int8 scales
  (one per 16 values), d; value = (d * scale) * (code - 32).
  IQ4_NL 20 (32, 18): d, 16 nibble bytes; value = d * T[code], T a 16-entry table.
  IQ4_XS 23 (256, 136): d, a uint16 and 4 bytes holding eight 6-bit scales s, 128
  nibble bytes; value = (d * (s - 32)) * T[code].
  IQ2_XXS 16 (256, 66), IQ2_XS 17 (256, 74), IQ2_S 22 (256, 82), IQ3_XXS 18 (256, 98):
  d, then per 32 values grid indices (each selecting 8, or for IQ3_XXS 4, magnitudes
  from a grid of 256, 512, 1024 or 256 entries), sign bits (7-bit codes whose eighth
  sign makes the count of minus signs even, or IQ2_S's plain sign bytes) and 4-bit
  scales s: value = +-((d * (0.5 + s) * q) * magnitude), q 0.25 (IQ2) or 0.5 (IQ3); the
  sign is a negation, so a NaN's sign flips too. The exact placements are in the
  decoders below.
* T and the four grids were measured from onnxruntime 1.32 (not copied from any
  source): rows with d = 1, scale 1, no signs and each grid index in turn were decoded
  by its kernel and the output divided by the scale (tests/ops/test_ms_gather_packed.py
  measures them again and compares).
* Every value is computed in float32 (inf and NaN scales and values propagate as IEEE
  arithmetic makes them), then rounded to the output type to nearest even. A NaN
  becomes float16 0x7E00 with its sign, or bfloat16 0x7FC1 whatever its sign
  (onnxruntime's conversions); a float32 output keeps every bit, NaN payloads included.
* Indices are int32 or int64 of any rank; an index below 0 or at or past vocab selects
  row 0 (no wrapping of negatives). Empty indices give an empty output, whatever vocab;
  vocab 0 with any index is an error (ShapeError).
* Other packed_type ids are refused as onnxruntime refuses them (OpAttributeError), as
  are output_dtype values other than 1, 10 and 16, and K not a positive multiple of the
  block size.
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from .elementwise import onnx_type_to_numpy
from .registry import TensorInfo, define

_DOMAIN = "com.microsoft"
_OP = "GatherPacked"
_F32 = np.float32
_OUTPUT_TYPES = {1: "float", 10: "float16", 16: "bfloat16"}
_INDEX_TYPES = (np.dtype(np.int32), np.dtype(np.int64))


def _half(blocks, at):
    """The little-endian float16 at byte `at` of each block, widened to float32."""
    return np.ascontiguousarray(blocks[..., at:at + 2]).view("<f2")[..., 0].astype(_F32)


def _nibbles(packed):
    """[..., 16 * n] bytes -> [..., 32 * n] codes: for every 16 bytes, their low nibbles
    then their high ones (GGML's order within a 32-value group)."""
    groups = packed.reshape(packed.shape[:-1] + (-1, 1, 16))
    codes = np.concatenate([groups & np.uint8(15), groups >> 4], axis=-2)
    return codes.reshape(packed.shape[:-1] + (-1,))


def _bits(packed, count):
    """The first `count` bits of each [..., bytes] little-endian bit field, as 0/1."""
    return np.unpackbits(packed, axis=-1, count=count, bitorder="little")


def _decode_f32(blocks):
    """F32 blocks [..., block_bytes] uint8 -> [..., block] float32 values."""
    return np.ascontiguousarray(blocks).view("<f4").astype(_F32)


def _decode_f16(blocks):
    """F16 blocks [..., block_bytes] uint8 -> [..., block] float32 values."""
    return np.ascontiguousarray(blocks).view("<f2").astype(_F32)


def _decode_bf16(blocks):
    """BF16 blocks [..., block_bytes] uint8 -> [..., block] float32 values."""
    # bfloat16 is the high half of a float32: widening is a 16-bit shift
    halves = np.ascontiguousarray(blocks).view("<u2").astype(np.uint32)
    return (halves << 16).view(_F32)


def _decode_q4_0(blocks):
    """Q4_0 blocks [..., block_bytes] uint8 -> [..., block] float32 values."""
    codes = _nibbles(blocks[..., 2:18]).astype(_F32)
    return (codes - _F32(8)) * _half(blocks, 0)[..., None]


def _decode_q5_0(blocks):
    """Q5_0 blocks [..., block_bytes] uint8 -> [..., block] float32 values."""
    codes = _nibbles(blocks[..., 6:22]) | (_bits(blocks[..., 2:6], 32) << 4)
    return (codes.astype(_F32) - _F32(16)) * _half(blocks, 0)[..., None]


def _decode_q8_0(blocks):
    """Q8_0 blocks [..., block_bytes] uint8 -> [..., block] float32 values."""
    codes = np.ascontiguousarray(blocks[..., 2:34]).view(np.int8).astype(_F32)
    return codes * _half(blocks, 0)[..., None]


def _k_scales_mins(packed):
    """The eight 6-bit (scale, min) pairs of Q5_K's 12 bytes, each [..., 8] float32:
    pairs 0-3 are the low 6 bits of bytes 0-3 (scales) and 4-7 (mins); pairs 4-7 take
    their low 4 bits from the nibbles of bytes 8-11 and their top 2 bits from the top
    bits of bytes 0-3 (scales) and 4-7 (mins)."""
    low6 = np.uint8(63)
    first, second, third = packed[..., 0:4], packed[..., 4:8], packed[..., 8:12]
    scales = np.concatenate([first & low6, (third & np.uint8(15)) | ((first >> 6) << 4)], -1)
    mins = np.concatenate([second & low6, (third >> 4) | ((second >> 6) << 4)], -1)
    return scales.astype(_F32), mins.astype(_F32)


def _decode_q5_k(blocks):
    """Q5_K blocks [..., block_bytes] uint8 -> [..., block] float32 values."""
    d, dmin = _half(blocks, 0), _half(blocks, 2)
    scales, mins = _k_scales_mins(blocks[..., 4:16])
    # 128 bytes: four runs of 32, each run's low nibbles the values of one 32-group and
    # its high nibbles the next; fifth bits: bit g of byte l belongs to value l of group g
    low = blocks[..., 48:176].reshape(blocks.shape[:-1] + (4, 1, 32))
    low = np.concatenate([low & np.uint8(15), low >> 4], axis=-2)
    high = _bits(blocks[..., 16:48, None], 8).swapaxes(-1, -2)
    codes = low.reshape(blocks.shape[:-1] + (8, 32)) | (high << 4)
    scale = (d[..., None] * scales)[..., None]
    offset = (dmin[..., None] * mins)[..., None]
    return (scale * codes.astype(_F32) - offset).reshape(blocks.shape[:-1] + (256,))


def _decode_q6_k(blocks):
    """Q6_K blocks [..., block_bytes] uint8 -> [..., block] float32 values."""
    lead = blocks.shape[:-1]
    # each half of 128 values: 64 low-nibble bytes, 32 high-bit bytes; within a half,
    # value 32 * q + l takes nibble (q // 2) of low byte l + 32 * (q % 2) and bit pair q
    # of high byte l
    low = blocks[..., 0:128].reshape(lead + (2, 1, 2, 32))
    low = np.concatenate([low & np.uint8(15), low >> 4], axis=-3).reshape(lead + (2, 4, 32))
    high = blocks[..., 128:192].reshape(lead + (2, 1, 32))
    high = (high >> (np.arange(4, dtype=np.uint8) * 2)[:, None]) & np.uint8(3)
    codes = (low | (high << 4)).astype(_F32) - _F32(32)
    scales = np.ascontiguousarray(blocks[..., 192:208]).view(np.int8).astype(_F32)
    # one scale per 16 values, in value order
    scale = (_half(blocks, 208)[..., None] * scales).reshape(lead + (2, 4, 2, 1))
    values = codes.reshape(lead + (2, 4, 2, 16)) * scale
    return values.reshape(lead + (256,))


# The IQ formats' value tables, measured from onnxruntime 1.32 (see the module doc):
# IQ4_NL / IQ4_XS's 16 code values, and the IQ2 / IQ3 grids. A grid entry lists 8
# (IQ2) or 4 (IQ3) magnitudes drawn from a few levels; each entry is stored as hex
# digits, 4 per IQ2 entry (2 bits a level index, the first value lowest) and 3 per
# IQ3 entry (3 bits a level index).
_IQ4_VALUES = np.array([-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89,
                        113], _F32)
_IQ2_LEVELS = np.array([8, 25, 43], _F32)
_IQ3_LEVELS = np.array([4, 12, 20, 28, 36, 44, 52, 62], _F32)
_IQ2_XXS_GRID = (
    "0000000200050008000a00110014002000220028002a00410044005000580061006400800082008a00a20101"
    "0104011001150140018401980200020202220282040104040410042104240440044204480460048104840490"
    "04a405000502050805200546056905800591060906100640068406a408000805080808140828084108440850"
    "08520888090409400a020a141001100410101021104010601084109010951100110811201150115a11801224"
    "12451400140814201425144914801518156216001616180118041810184018811900190519a01a5120002002"
    "200a204420612080208221292148220022022401240424102440245625002541256426902808282028942a44"
    "4001400440104018402140244040404840564060408140844090410041204161418041854201421042484256"
    "4268440044084420448044994512452446004801480448104840484549004958496149824a454a9050005008"
    "501150195020508050885104514251a4529154905492550a56015654580058115819586459405a0860046010"
    "60406068610061556218626064006405651065126584684280008002800a8041808281048118814082118401"
    "84048410841584408460850085468594860986408660880289048a11900490109024904090a1911691809245"
    "940094229444955198819920a002a050a085a109a200a418a850a904"
)
_IQ2_XS_GRID = (
    "0000000200050008000a00110014001600190020002200250028004100440046004900500052005500580061"
    "0064008000820085008800910094009900a001010104010601090110011201150118011a0121012401400142"
    "014501480151015401600168018101840190020002020205020802110214022002410244025002550280028a"
    "0401040404060409041004120415041804210424044004420445044804510454045604600481048404900500"
    "0502050505080511051405200541054405500561058006010604061006260640064206840800080208050808"
    "080a08110814082008250841084408500858088008a008aa0901090409100940098109890a000a200a280a96"
    "0aa010011004100610091010101210151018102110241040104210451048105110541060106a108110841090"
    "1100110211051108111111141120114111441150118011941196120112041206121012401260140014021405"
    "1408141114141420144114441449145014641480150115041510154016001614164918011804181018121840"
    "185418861900190519661a511aa92000200220052008200a201120142020204120442050208020a021012104"
    "211021402148216522002222228022a82401240424102429244025002541255225992601261a26a628002808"
    "280a28202855288828a2296829902a082a202a822a882a8a4001400440064009401040124015401840214024"
    "4040404240454048404a40514054406040654081408440904100410241054108411141144120414141444150"
    "4180418541a24201420442104212422942404400440244054408441144144419442044414444445044804494"
    "45014504451045244540459a4600460a46444650480148044810484048454854486249004911494449504969"
    "4a045000500250055008501150145020502850415044505050805101510451105115514051425200524452aa"
    "540154045410542154405460548154a155005508558055885621566856a158005814584158505899591a5940"
    "59425a85600160046010604060546062608660a961006224624a62926400641665106540654565a46801686a"
    "69256a066a546a628000800280058008801180148020802a8041804480508080808280a880aa810181048106"
    "8110814081518159820082208280828282a082a8840184048410841284158440846084898500854485a58618"
    "866a880088088825885a8880888288a889068a228a808a888a968aa890019004901090409056908491009122"
    "916492569289940094059444945094589529959095929641985198a699499a159a60a000a002a008a00aa020"
    "a02aa0a0a151a159a1a6a200a202a208a22aa280a2a0a440a495a665a698a80aa820a822a828a8a0a8a8a904"
    "a984a986aa28aa2aaa91aaaa"
)
_IQ2_S_GRID = (
    "0000000200050008000a00110014001600190020002200250028004100440046004900500052005500580061"
    "00640066006900800082008500880091009400a000a500aa0101010401060109011001120115011801210124"
    "014001420145014801510154015601590160016501680181018401900192019501a101a40200020202050208"
    "021102140220022a02410244024602490250025502800285028a029402a20401040404060409041004120415"
    "041804210424042604290440044204450448044a045104540456045904600462046504810484048604890490"
    "0495049804a104a40500050205050508050a0511051405160519052005250528054105440546054905500552"
    "055505580561056405800582058505880591059405a006010604060606090610061506400645064806510654"
    "06600681068406900800080208050808081108140816081908200825082a0841084408460849085008520855"
    "08580861086408800885089408aa090109040910091209150918092109400945094809510954096009810990"
    "0a000a110a140a220a280a2a0a500a9910011004100610091010101210151018102110241026104010421045"
    "10481051105410561059106010621065106810811084108610901095109810a110a41100110211051108110a"
    "1111111411161119112011221125112811411144114611491150115211551158116111641180118211851188"
    "1191119412011204120912101215122112241240124512511254128112841290140014021405140814111414"
    "14161419142014251428144114441446144914501452145514581461146414801482148514881491149414a0"
    "1501150415061509151015121515151815211524154015421545154815511554156015811584159016001605"
    "1608161116141620164116441650168016aa1801180418061809181018151818182118401842184518481851"
    "18541860188118841900190219051908191119141920194119441950196919a21a041a101a401a5620002002"
    "20052008201120142016201920202025202a2041204420502052205520642080208a209420aa210121042110"
    "2112211521212140214221452151215421602181218421902200220a22222228222a224422502288228a22a8"
    "2401240424062409241024152418242124242440244224452448245124542460248124842490250025052508"
    "25112514252025412544255025662580260126042610264026592800280528112814284128442850288a28aa"
    "29012904291029952a0a2a222a642a882a8a40014004400640094010401240154018401a4021402440264040"
    "404240454048404a40514054405640594060406240654081408440904095409840a140a44100410241054108"
    "4111411441164119412041224125414141444146414941504152415541584161416441804182418541884191"
    "419441a04201420442104212421542184224424042454248425142544260428142844400440244054408440a"
    "4411441444164419442044224425442844414444444644494450445244554458446144644480448244854488"
    "4491449444a045014504450645094510451245154518452145244540454245454548455145544560456a4581"
    "458445904600460246054608461146144620464146444650468046a548014804480948104812481548184821"
    "4824484048424845484848514854486048844890490049024905490849114914492049414944495049804996"
    "4a014a044a104a40500050025005500850115014501650195020502250255028504150445046504950505052"
    "5055505850615064508050825085508850915094510151045106510951105112511551185121512451405142"
    "5145514851515154516051815184519052005205520852115214522052415244525052695280540154045406"
    "5409541054125415541854215424544054425445544854515454546054815484549055005502550555085511"
    "551455205541554455505580560156045610562656405800580258055808581158145820584158445850585a"
    "588059015904591059405a005a195a855aa86001600460066010601260156018602160246040604560486051"
    "6054606060846090610061026105610861116114612061416144615061806199620462106240625662a16400"
    "6405640864116414642064416444645064806501650465106540654a65686592660066946801680468106865"
    "68986900692a6a426aa180008002800580088011801480198020802580418044805080528055805880618080"
    "80858091809481018104810981108112811581188121812481408142814581488151815481818184819081a9"
    "82008205820a8211821482418244825084018404840684098410841284158418842184408442844584488451"
    "8454846084818484849085008502850585088511851485208541854485508580858a86018604861086298640"
    "880088058811881488418844885088a289018904894089658a228a588a5a8a828aa290019004900990109012"
    "90159018902490409042904590489051905490609081908490909100910591119114914191449150915a9201"
    "92049210924092a69400940294059408941194149420944194449450948094969501950495109540959895a1"
    "9600964696649801980498109826984098a99900994999529a90a000a005a00aa014a022a02aa041a044a050"
    "a0a2a0aaa140a165a202a20aa222a228a22aa282a288a28aa2a8a401a404a410a440a489a4a4a500a519a651"
    "a80aa828a8a2a954a986aa08aa0aaa20aa22aa28aa88aaaa"
)
_IQ3_XXS_GRID = (
    "00000200400900b00f01001201902203b03d04104304804a05105505805a06106c0780800820840890900920"
    "9909b09f0a90af0bd0c10c70c80ca0d50f810b11f12412f13b13d14114715a16a19d1b41c81cc1ce1e31f120"
    "120320820a21121321821a21c22722824024224925025228128328828a2912982ba2c02c22d02d92e62f6301"
    "3053283503543663793853d23e040040240940b41041241641942244144344544844a4514584734774784804"
    "8248948f49049249f4a04ad4c14c84cc4f84fc51d52b54355756157c5c15c35ce5e560160860a61161362863"
    "563a6406426506596646666816836886956aa6ba6c96db71872773a74074675276d78c79e7b37db7f080480f"
    "81d81f82b82f87c89089f8a08b08b68c78e59049299349559639789c59c89ca9d8a0aa21a38a40a46a56a6da"
    "8ca9aabaac2aebb08b13b17b3ab42b59ba8bd4be2c14c24c26c34c51c71c8fcb4cd8cded24d45d6ad9bdc3dd"
    "1e03e05e07e08e1ae2ae56e60e8aea5eaaec0ecdedbef0f11f21f40f42f54f98"
)


def _grid(chunks, digits, bits, levels):
    """The float32 grid [entries, 16 // bits or 4] held by the hex strings `chunks`:
    `digits` hex digits an entry, read as level indices of `bits` bits, lowest first."""
    text = np.frombuffer("".join(chunks).encode("ascii"), np.uint8)
    nibbles = np.where(text >= ord("a"), text - ord("a") + 10, text - ord("0"))
    entries = nibbles.reshape(-1, digits).astype(np.uint32)
    value = (entries << (4 * np.arange(digits - 1, -1, -1, dtype=np.uint32))).sum(axis=1)
    width = 8 if bits == 2 else 4
    index = (value[:, None] >> (bits * np.arange(width, dtype=np.uint32))) & ((1 << bits) - 1)
    return levels[index]


_IQ2_XXS = _grid(_IQ2_XXS_GRID, 4, 2, _IQ2_LEVELS)
_IQ2_XS = _grid(_IQ2_XS_GRID, 4, 2, _IQ2_LEVELS)
_IQ2_S = _grid(_IQ2_S_GRID, 4, 2, _IQ2_LEVELS)
_IQ3_XXS = _grid(_IQ3_XXS_GRID, 3, 3, _IQ3_LEVELS)


def _sign_bits(signs):
    """uint8 sign bytes [...] -> [..., 8] bools: value j negative where bit j is set."""
    return np.unpackbits(signs[..., None], axis=-1, bitorder="little").astype(bool)


def _signed(magnitudes, negative):
    """The magnitudes with the sign flipped where `negative`: a negation, not a product
    with -1, so a NaN's sign flips too (as onnxruntime's; x86 multiplication would pass
    the NaN through unchanged)."""
    return np.where(negative, -magnitudes, magnitudes)


def _seven_bit_signs(seven):
    """7-bit sign codes -> [..., 8] bools (negative): the eighth sign makes the count of minus
    signs even (the IQ2 / IQ3 sign coding)."""
    seven = seven.astype(np.uint8)
    odd = np.unpackbits(seven[..., None], axis=-1).sum(axis=-1, dtype=np.uint8) & np.uint8(1)
    return _sign_bits(seven | (odd << 7))


def _sub_scales(d, nibbles, quarter):
    """d * (0.5 + nibble) * quarter, float32, in GGML's order."""
    return (d * (nibbles.astype(_F32) + _F32(0.5))) * _F32(quarter)


def _seven_bit_fields(words):
    """The four 7-bit fields at bits 0, 7, 14, 21 of uint32 words: [...] -> [..., 4]."""
    return (words[..., None] >> (np.arange(4, dtype=np.uint32) * 7)) & np.uint32(127)


def _decode_iq2_xxs(blocks):
    """IQ2_XXS blocks [..., block_bytes] uint8 -> [..., block] float32 values."""
    lead = blocks.shape[:-1]
    groups = blocks[..., 2:66].reshape(lead + (8, 8))
    # per 32 values: four grid indices, then a uint32 of four 7-bit sign codes and a
    # 4-bit scale on top
    words = np.ascontiguousarray(groups[..., 4:8]).view("<u4")[..., 0]
    scale = _sub_scales(_half(blocks, 0)[..., None], words >> 28, 0.25)
    magnitudes = scale[..., None, None] * _IQ2_XXS[groups[..., :4]]
    return _signed(magnitudes, _seven_bit_signs(_seven_bit_fields(words))).reshape(lead + (256,))


def _decode_iq2_xs(blocks):
    """IQ2_XS blocks [..., block_bytes] uint8 -> [..., block] float32 values."""
    lead = blocks.shape[:-1]
    # per 8 values a uint16: 9 bits of grid index, 7 of sign code; per 32 values a
    # byte of two 4-bit scales, one for each 16
    codes = np.ascontiguousarray(blocks[..., 2:66]).view("<u2").reshape(lead + (8, 4))
    nibbles = _split_nibbles(blocks[..., 66:74])
    scale = _sub_scales(_half(blocks, 0)[..., None, None], nibbles, 0.25)
    scale = np.repeat(scale, 2, axis=-1)
    magnitudes = scale[..., None] * _IQ2_XS[codes & np.uint16(511)]
    return _signed(magnitudes, _seven_bit_signs(codes >> 9)).reshape(lead + (256,))


def _split_nibbles(packed):
    """[..., n] bytes -> [..., n, 2]: each byte's low nibble, then its high one."""
    return np.stack([packed & np.uint8(15), packed >> 4], axis=-1)


def _decode_iq2_s(blocks):
    """IQ2_S blocks [..., block_bytes] uint8 -> [..., block] float32 values."""
    lead = blocks.shape[:-1]
    # 32 bytes of grid index low bits, 32 sign bytes, 8 bytes of the indices' top two
    # bits (pair l for the l-th 8 values of a 32), 8 bytes of scale nibbles
    low = blocks[..., 2:34].reshape(lead + (8, 4)).astype(np.uint16)
    top = (blocks[..., 66:74, None] >> (np.arange(4, dtype=np.uint8) * 2)) & np.uint8(3)
    index = low | (top.astype(np.uint16) << 8)
    signs = _sign_bits(blocks[..., 34:66].reshape(lead + (8, 4)))
    scale = _sub_scales(_half(blocks, 0)[..., None, None], _split_nibbles(blocks[..., 74:82]),
                        0.25)
    magnitudes = np.repeat(scale, 2, axis=-1)[..., None] * _IQ2_S[index]
    return _signed(magnitudes, signs).reshape(lead + (256,))


def _decode_iq3_xxs(blocks):
    """IQ3_XXS blocks [..., block_bytes] uint8 -> [..., block] float32 values."""
    lead = blocks.shape[:-1]
    # 64 grid-index bytes (two 4-value entries per 8 values), then per 32 values a
    # uint32 of four 7-bit sign codes and a 4-bit scale
    grid = _IQ3_XXS[blocks[..., 2:66]].reshape(lead + (8, 4, 8))
    words = np.ascontiguousarray(blocks[..., 66:98]).view("<u4")
    scale = _sub_scales(_half(blocks, 0)[..., None], words >> 28, 0.5)
    magnitudes = scale[..., None, None] * grid
    return _signed(magnitudes, _seven_bit_signs(_seven_bit_fields(words))).reshape(lead + (256,))


def _decode_iq4_nl(blocks):
    """IQ4_NL blocks [..., block_bytes] uint8 -> [..., block] float32 values."""
    return _half(blocks, 0)[..., None] * _IQ4_VALUES[_nibbles(blocks[..., 2:18])]


def _decode_iq4_xs(blocks):
    """IQ4_XS blocks [..., block_bytes] uint8 -> [..., block] float32 values."""
    lead = blocks.shape[:-1]
    # a 6-bit scale per 32 values: low 4 bits from the nibbles of 4 bytes, top 2 bits
    # from a uint16's pairs; the scale is biased by 32
    top = np.ascontiguousarray(blocks[..., 2:4]).view("<u2")
    top = (top >> (np.arange(8, dtype=np.uint16) * 2)) & np.uint16(3)
    low = _split_nibbles(blocks[..., 4:8]).reshape(lead + (8,))
    bias = (low | (top.astype(np.uint8) << 4)).astype(_F32) - _F32(32)
    scale = _half(blocks, 0)[..., None] * bias
    codes = _nibbles(blocks[..., 8:136]).reshape(lead + (8, 32))
    return (scale[..., None] * _IQ4_VALUES[codes]).reshape(lead + (256,))


# packed_type -> (GGML name, block elements, block bytes, decoder)
_FORMATS = {
    0: ("F32", 1, 4, _decode_f32),
    1: ("F16", 1, 2, _decode_f16),
    2: ("Q4_0", 32, 18, _decode_q4_0),
    6: ("Q5_0", 32, 22, _decode_q5_0),
    8: ("Q8_0", 32, 34, _decode_q8_0),
    13: ("Q5_K", 256, 176, _decode_q5_k),
    14: ("Q6_K", 256, 210, _decode_q6_k),
    16: ("IQ2_XXS", 256, 66, _decode_iq2_xxs),
    17: ("IQ2_XS", 256, 74, _decode_iq2_xs),
    18: ("IQ3_XXS", 256, 98, _decode_iq3_xxs),
    20: ("IQ4_NL", 32, 18, _decode_iq4_nl),
    22: ("IQ2_S", 256, 82, _decode_iq2_s),
    23: ("IQ4_XS", 256, 136, _decode_iq4_xs),
    30: ("BF16", 1, 2, _decode_bf16),
}


def _check_attrs(attrs):
    """What is wrong with GatherPacked's attributes, or None."""
    kind, k = attrs["packed_type"], attrs["K"]
    if kind not in _FORMATS:
        return (f"packed_type {kind} is not a GGML type onnxruntime's GatherPacked takes "
                f"(known: {sorted(_FORMATS)})")
    name, block, _, _ = _FORMATS[kind]
    if k < 1 or k % block:
        return f"K ({k}) must be a positive multiple of {name}'s block size {block}"
    if attrs["output_dtype"] not in _OUTPUT_TYPES:
        return (f"output_dtype {attrs['output_dtype']} must be 1 (float), 10 (float16) "
                f"or 16 (bfloat16)")
    return None


def _format(attrs):
    """(name, block, block_bytes, decoder, row_bytes) of the node's packed_type (checked
    by `_check_attrs`)."""
    name, block, size, decode = _FORMATS[attrs["packed_type"]]
    return name, block, size, decode, attrs["K"] // block * size


def _round_float16(x):
    """float32 -> float16 to nearest even, NaN as 0x7E00 with its sign."""
    bits = x.astype(np.float16).view(np.uint16)
    nan = np.isnan(x)
    if nan.any():
        sign = (x.view(np.uint32) >> 16).astype(np.uint16) & np.uint16(0x8000)
        bits = np.where(nan, sign | np.uint16(0x7E00), bits)
    return bits.view(np.float16)


def _round_bfloat16(x):
    """float32 -> bfloat16 to nearest even on the bits, every NaN as 0x7FC1."""
    bits = x.view(np.uint32)
    rounded = (bits + (np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1)))) >> 16
    rounded = np.where(np.isnan(x), np.uint32(0x7FC1), rounded).astype(np.uint16)
    return rounded.view(onnx_type_to_numpy(16))


def _to_output(x, output_dtype):
    if output_dtype == 10:
        return _round_float16(x)
    if output_dtype == 16:
        return _round_bfloat16(x)
    return x


def _gather_packed_kernel(inputs, attrs, ctx):
    """Gather rows of the packed table and dequantize them (see the module doc): output
    indices.shape + [K] of output_dtype.

    Raises:
        ShapeError: data is not 2-D uint8 with row_bytes fitting K and packed_type,
            indices are not int32/int64, or vocab is 0 while indices are not empty.
    """
    data, indices = (np.asarray(v) for v in inputs[:2])
    name, block, size, decode, row_bytes = _format(attrs)
    if data.dtype != np.uint8 or data.ndim != 2:
        raise ShapeError(f"{_OP}: data must be 2-D uint8 [vocab, row_bytes], got "
                         f"{data.dtype} {list(data.shape)}")
    if data.shape[1] != row_bytes:
        raise ShapeError(f"{_OP}: data has rows of {data.shape[1]} bytes, but {name} with "
                         f"K={attrs['K']} needs {row_bytes} (K / {block} blocks of {size})")
    if indices.dtype not in _INDEX_TYPES:
        raise ShapeError(f"{_OP}: indices must be int32 or int64, got {indices.dtype}")
    vocab = data.shape[0]
    if vocab == 0 and indices.size:
        raise ShapeError(f"{_OP}: data has no rows (vocab 0), but indices are not empty")
    rows = np.where((indices >= 0) & (indices < vocab), indices, 0).reshape(-1)
    picked = np.take(data, rows, axis=0).reshape(-1, attrs["K"] // block, size)
    values = decode(picked).reshape(indices.shape + (attrs["K"],))
    return (_to_output(np.ascontiguousarray(values, _F32), attrs["output_dtype"]),)


def _gather_packed_infer(attrs, inputs):
    """indices.shape + [K] of output_dtype.

    Raises:
        ShapeError: data or indices of a type or shape the op does not take.
    """
    data, indices = inputs[0], inputs[1]
    _, _, _, _, row_bytes = _format(attrs)
    if data is not None and data.dtype is not None and np.dtype(data.dtype) != np.uint8:
        raise ShapeError(f"{_OP}: data must be uint8, got {data.dtype}")
    if data is not None and data.shape is not None:
        if len(data.shape) != 2:
            raise ShapeError(f"{_OP}: data must be 2-D [vocab, row_bytes], got shape "
                             f"{list(data.shape)}")
        if data.shape[1] is not None and data.shape[1] != row_bytes:
            raise ShapeError(f"{_OP}: data has rows of {data.shape[1]} bytes, but the "
                             f"format with K={attrs['K']} needs {row_bytes}")
    if indices is not None and indices.dtype is not None and \
            np.dtype(indices.dtype) not in _INDEX_TYPES:
        raise ShapeError(f"{_OP}: indices must be int32 or int64, got {indices.dtype}")
    dtype = onnx_type_to_numpy(attrs["output_dtype"])
    if indices is None or indices.shape is None:
        return [TensorInfo(dtype, None)]
    return [TensorInfo(dtype, tuple(indices.shape) + (attrs["K"],))]


OPS = (
    define(_OP, ("data", "indices"), ("output",), _gather_packed_kernel,
           (("packed_type", "int"), ("K", "int"), ("output_dtype", "int", 16)),
           infer=_gather_packed_infer, domain=_DOMAIN, dtypes=("uint8",),
           check_attrs=_check_attrs,
           doc="Gather rows of a GGML block-packed table, dequantized to float."),
)
