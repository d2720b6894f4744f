# ehframe_seeds.py DIR - seeds for fuzz_ehframe: a made-up module (a CIE like gcc's, an FDE with
# remember/restore, an expression CFA and an undefined return address) and the vDSO's own segment.
# Each: 2-byte offset of .eh_frame_hdr, 4-byte pc offset from it, the segment.
import struct, sys, os
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
def write(name, hdr_off, rel, img):
    open(os.path.join(out, name), 'wb').write(struct.pack('<Hi', hdr_off, rel) + img)
# a made-up module: a CIE like gcc's, one FDE, the search table; code 0x100 bytes before the header
def made_up(insns):
    cie_body = bytes([1]) + b'zR\0' + bytes([1, 0x78, 16, 1, 0x1b, 0x0c, 7, 8, 0x90, 1])
    img = struct.pack('<II', 4 + len(cie_body), 0) + cie_body
    fde = len(img)
    body_fixed = 4 + 4 + 4 + 1 + len(insns)
    total = fde + 4 + body_fixed + 4
    hdr = total
    code = hdr - 0x100
    pc_field = fde + 8
    img += struct.pack('<IIiI', body_fixed, fde + 4, code - pc_field, 0x100) + b'\0' + insns + struct.pack('<I', 0)
    img += bytes([1, 0x1b, 0x03, 0x3b]) + struct.pack('<iIii', -(hdr + 4), 1, code - hdr, fde - hdr)
    return hdr, img
hdr, img = made_up(bytes([0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6, 0x50, 0x0a, 0x0c, 7, 8, 0x41, 0x0b, 0x4a, 0x07, 16, 0x0f, 2, 0x77, 0]))
write('made-up', hdr, -0x100 + 0x14, img)
# the vDSO's own segment, as the kernel maps it
for line in open('/proc/self/maps'):
    if line.rstrip().endswith('[vdso]'):
        lo, hi = (int(x, 16) for x in line.split()[0].split('-'))
        with open('/proc/self/mem', 'rb') as m:
            m.seek(lo)
            seg = m.read(hi - lo)
        phoff, = struct.unpack_from('<Q', seg, 32)
        phentsize, phnum = struct.unpack_from('<HH', seg, 54)
        for i in range(phnum):
            p_type, flags, off, vaddr = struct.unpack_from('<IIQQ', seg, phoff + i * phentsize)
            if p_type == 0x6474e550 and vaddr < 65536:
                write('vdso', vaddr, 0, seg[:65530])
