// Package checkpoint saves and loads named tensors and string metadata in
// the safetensors format, the format of Hugging Face's safetensors library,
// which PyTorch programs read and write (tools/safetensors/reader.py
// reads and writes it with nothing but torch.frombuffer, json and struct).
//
// A file is an 8-byte little-endian header length n, n bytes of JSON,
// then the tensors' raw little-endian, row-major bytes. The JSON maps
// each name to {"dtype", "shape", "data_offsets"} (offsets relative to
// the end of the header) and may hold "__metadata__", a map of strings
// to strings:
//
//	[n][{"__metadata__":{"step":"1200"},"0.weight":{"dtype":"F32","shape":[8,4],"data_offsets":[0,128]},...}][data]
//
// Save writes a map of tensors and a metadata map atomically (temporary
// file, fsync, rename, fsync of the folder); Load reads a file whole onto
// a chosen device or fails saying what is wrong; LoadInto copies a loaded
// file into a model's named tensors (nn.StateDict), all or nothing, with
// PyTorch's strict and non-strict matching, and Sub selects the part of a
// file saved under one prefix ("model.", "optimizer.") for it or for an
// optimizer's LoadStateDict. Names follow PyTorch's
// dotted state-dict convention ("layers.0.weight"). SetMeta and GetMeta
// keep typed values (the step, a LoaderState, GeneratorStates, an
// optimizer's hyper-parameters, a schedule's state) as JSON in the
// metadata under the Meta* keys:
//
//	meta := map[string]string{}
//	checkpoint.SetMeta(meta, checkpoint.MetaStep, step)
//	checkpoint.SetMeta(meta, checkpoint.MetaLoader, checkpoint.LoaderState(loader.State()))
//	err := checkpoint.Save("run/ckpt.safetensors", state, meta)
//
//	f, err := checkpoint.Load("run/ckpt.safetensors", checkpoint.On(gpu))
//	_, err = checkpoint.LoadInto(f, state, true)
//	err = f.GetMeta(checkpoint.MetaStep, &step)
//
// Dtypes: Tessera's Float32, Float64, Int32 and Bool are written as F32,
// F64, I32 and BOOL. Files PyTorch wrote may also hold I64 (PyTorch's
// integer type), which loads as Int32 when every value fits, and F16 or
// BF16, which load as Float32 (exactly: both are subsets of float32).
// Other dtypes of the specification are refused with tensor.ErrDType.
//
// Robustness: a truncated, corrupt or mismatched file is an error, a
// *FileError or *MismatchError naming the file, the tensor and the
// problem, never a panic or a partial load. Load checks the header
// against the file's length before allocating, and the data offsets must
// tile the data exactly, as the specification requires. A fuzz test
// (FuzzDecode) holds this.
//
// Damage: Save records a CRC-32C checksum of each tensor's bytes and of
// the header's content in the metadata (MetaChecksum; other safetensors
// readers see one more metadata string), and Load verifies it, so that a
// flipped bit or a lost block is an ErrChecksum error naming the tensor
// and its bytes, or the header, never wrong values; a file cut short is
// an ErrTruncated error that says how long it should be ("truncated:
// want 1234 bytes, have 1000"). Files without the checksum (PyTorch's,
// or Tessera's from before it) load as before. Tests flip every bit and
// cut at every length of a saved file.
//
// Crashes: because Save replaces a file atomically, a process killed in
// the middle of a save (SIGKILL, a crash, a full disk, a file-size
// limit) leaves the previous checkpoint whole at the path, and at most
// a temporary file beside it, ".name.tmpNNN", which is never read and
// which the next Save of that path removes. Tests kill a child process
// at every stage of a save, and fill the disk under it. So the file at
// a checkpoint's path is always the last complete save; there is no
// fallback to an older file, which would silently repeat steps: a
// damaged file (bit rot, a bad copy) is an error, as torch.load's is,
// and resuming from an older checkpoint is the user's explicit choice.
//
// Why not github.com/nlpodyssey/safetensors: its validation is sound
// (contiguous offsets, overflow-checked sizes, no trailing bytes; it did
// not panic in a million fuzzed inputs), but it reads a file only from a
// []byte of the whole file (twice a checkpoint's size in memory while
// loading), accepts a name given twice (encoding/json keeps the last),
// accepts dimensions beyond int64 next to a zero, and says only
// "metadata incomplete buffer" or "invalid metadata offset" for most
// malformed files. Giving each problem a message and reading each tensor
// straight from the file needed a parser of our own, and the writer is
// thirty lines, so this package implements the format itself.
package checkpoint
