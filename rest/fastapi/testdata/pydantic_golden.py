"""Builds pydantic-golden.json, the oracle for rest/fastapi's FastAPI/pydantic 422 fidelity.

Run with pydantic v2 installed: python3 rest/fastapi/testdata/pydantic_golden.py
The models mirror the Go schemas in rest/fastapi/golden_test.go; FastAPI is not needed: it validates a
body with TypeAdapter.validate_python(value, from_attributes=True) and prefixes loc with "body"
(or "query", name), which is what this script does.
"""
import json, random, uuid, enum, datetime
from typing import Annotated, Sequence, Union
from pydantic import BaseModel, ConfigDict, UUID4, TypeAdapter, Field, ValidationError, AwareDatetime, AliasChoices

random.seed(11)

class Schema(BaseModel):
    model_config = ConfigDict(from_attributes=True)

Str40 = Annotated[str, Field(min_length=1, max_length=40)]
Val = Union[Annotated[str, Field(min_length=1, max_length=500)], int, float, bool]
Int32 = Annotated[int, Field(ge=-2147483648, le=2147483647)]

class Status(enum.StrEnum):
    granted = "granted"
    revoked = "revoked"
    disabled = "disabled"

class LicenseKeyValidate(Schema):
    key: str
    organization_id: UUID4
    activation_id: UUID4 | None = None
    increment_usage: Annotated[int, Field(ge=0)] | None = None
    conditions: Annotated[dict[Str40, Val], Field(max_length=50)] = {}

class LicenseKeyUpdate(Schema):
    status: Status | None = None
    usage: Int32 = 0
    limit_activations: Annotated[Int32, Field(gt=0)] | None = None
    expires_at: datetime.datetime | None = None
    flag: bool = False
    ratio: float = 0.0

class Base(Schema):
    member_id: UUID4 | None = None
    external_member_id: str | None = None
    return_url: Annotated[str, Field(min_length=1, max_length=20)] | None = None

class CustomerSessionCustomerIDCreate(Base):
    customer_id: UUID4

class CustomerSessionCustomerExternalIDCreate(Base):
    external_customer_id: str = Field(validation_alias=AliasChoices("external_customer_id", "customer_external_id"))

class EventCreateCustomer(Schema):
    name: Annotated[str, Field(max_length=12)]
    timestamp: AwareDatetime | None = None
    customer_id: UUID4

class EventCreateExternalCustomer(Schema):
    name: Annotated[str, Field(max_length=12)]
    timestamp: AwareDatetime | None = None
    external_customer_id: str

class EventsIngest(Schema):
    events: list[Union[EventCreateCustomer, EventCreateExternalCustomer]]

schemas = {
  "validate": LicenseKeyValidate,
  "update": LicenseKeyUpdate,
  "session": Union[CustomerSessionCustomerIDCreate, CustomerSessionCustomerExternalIDCreate],
  "events": EventsIngest,
}
adapters = {k: TypeAdapter(v) for k, v in schemas.items()}

def rand_str():
    u = str(uuid.uuid4())
    choices = [
        u, u.upper(), u.replace("-", ""), "{"+u+"}", "urn:uuid:"+u, str(uuid.uuid1()), u[:-1], u+"0", u.replace("-", "", 1),
        "-".join([u[:8], u[9:13]]), u[:10]+"x"+u[11:], "é"+u[1:], u[:20]+"€"+u[21:], "", " ", "abc", "zzz",
        "1", "0", "-1", " 12 ", "1_000", "1__0", "_1", "1.0", "1.5", "1e3", "+5", "007", "0x10", "inf", "nan", "-0",
        "true", "FALSE", "yes", "Off", "t", "n", "2", "maybe",
        "2026-04-01", "2026-04-01T10:00:00Z", "2026-04-01T10:00:00", "2026-04-01T10:00:00+02:00", "2026-04-01 10:00",
        "2026-13-01", "2026-02-30", "2026-04-01T25:00:00Z", "yesterday!", "2026/04/01", "20260401", "1700000000", "1700000000123",
        "2026-04-01T10:00:00.1234567Z", "2026-04-01T10:00Z", "2026-04-01T10", "foo", "granted", "revoked", "GRANTED",
        "x"*41, "y"*13, "z"*21, "k"*501,
    ]
    return random.choice(choices)

def rand_scalar():
    r = random.random()
    if r < 0.5: return rand_str()
    if r < 0.7: return random.choice([0, 1, -1, 2, 7, 2147483647, 2147483648, -2147483649, 10**20, 10**30])
    if r < 0.85: return random.choice([0.0, 1.0, 1.5, -2.0, 1e20, 3.0e9, 0.1])
    if r < 0.95: return random.choice([True, False])
    return None

def rand_value(depth=0):
    r = random.random()
    if depth < 2 and r < 0.08: return [rand_value(depth+1) for _ in range(random.randint(0,2))]
    if depth < 2 and r < 0.15: return {rand_str()[:5]: rand_value(depth+1) for _ in range(random.randint(0,2))}
    return rand_scalar()

fields = {
  "validate": ["key", "organization_id", "activation_id", "increment_usage", "conditions"],
  "update": ["status", "usage", "limit_activations", "expires_at", "flag", "ratio"],
  "session": ["member_id", "external_member_id", "return_url", "customer_id", "external_customer_id", "customer_external_id"],
  "events": ["events"],
}

def rand_body(name):
    if random.random() < 0.05:
        return rand_value()
    body = {}
    for f in fields[name]:
        if random.random() < 0.6:
            if f == "conditions":
                body[f] = {random.choice(["a", "b", "x"*41, ""]): rand_scalar() for _ in range(random.randint(0,3))} if random.random() < 0.8 else rand_value()
            elif f == "events":
                evs = []
                for _ in range(random.randint(0,2)):
                    ev = {}
                    for g in ["name", "timestamp", "customer_id", "external_customer_id"]:
                        if random.random() < 0.6: ev[g] = rand_scalar()
                    evs.append(ev)
                body[f] = evs if random.random() < 0.9 else rand_value()
            else:
                body[f] = rand_value()
    if random.random() < 0.1:
        body["unknown"] = rand_value()
    return body

def enc(o):
    return {}

cases = []
for i in range(6000):
    name = random.choice(list(schemas))
    body = rand_body(name)
    raw = json.dumps(body)
    val = json.loads(raw)
    try:
        out = adapters[name].validate_python(val, from_attributes=True)
        dump = out.model_dump(mode="json", exclude_unset=True)
        cases.append({"schema": name, "raw": raw, "ok": True, "cls": type(out).__name__, "dump": dump})
    except ValidationError as e:
        errs = []
        for er in e.errors(include_url=False):
            d = {"type": er["type"], "loc": ["body"] + list(er["loc"]), "msg": er["msg"], "input": er["input"]}
            if "ctx" in er: d["ctx"] = er["ctx"]
            errs.append(d)
        cases.append({"schema": name, "raw": raw, "ok": False, "want": json.dumps(errs, ensure_ascii=False, separators=(",", ":"), default=enc)})
body_cases = cases

# ---- query parameters ----

from typing import Any
from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema
random.seed(5)

class _MQF:
    """Polar's MultipleQueryFilter[T] (polar/kit/schemas.py): union of T and Sequence[T], always a list."""
    def __init__(self, item): self.item = item
    def __get_pydantic_core_schema__(self, source, handler: GetCoreSchemaHandler):
        generic_type = self.item
        sequence_schema = handler.generate_schema(Sequence[generic_type])
        scalar_schema = handler.generate_schema(generic_type)
        union_schema = core_schema.union_schema([scalar_schema, sequence_schema])
        return core_schema.no_info_after_validator_function(lambda v: v if isinstance(v, Sequence) and not isinstance(v, str) else [v], union_schema)

class OrderStatus(enum.StrEnum):
    draft = "draft"; pending = "pending"; paid = "paid"

SortEnum = enum.StrEnum("OrderSortProperty", ["created_at", "-created_at", "status", "-status"])

scalars = {
    "page": TypeAdapter(Annotated[int, Field(gt=0)]),
    "bool": TypeAdapter(bool | None),
    "datetime": TypeAdapter(datetime.datetime | None),
    "float": TypeAdapter(float),
    "uuid": TypeAdapter(UUID4),
    "str": TypeAdapter(str | None),
}
filter_uuid = TypeAdapter(Annotated[Any, _MQF(UUID4)] | None)
filter_enum = TypeAdapter(Annotated[Any, _MQF(OrderStatus)] | None)
filter_str = TypeAdapter(Annotated[Any, _MQF(str)] | None)
sorting = TypeAdapter(list[SortEnum] | None)

u = str(uuid.uuid4())
pool = [u, u.upper(), "{"+u+"}", str(uuid.uuid1()), "", " ", "abc", "zzz", "1", "0", "-1", " 12 ", "+5", "1_000", "1__0", "_1", "1.0", "1.", ".0", "1.5",
        "1e3", "007", "0x10", "inf", "-inf", "nan", "-0", "00", "0_0", "0.000", "99999999999999999999", "1" * 30, "true", "FALSE", "yes", "Off", "t", "n", "2",
        "maybe", "on ", "2026-04-01", "2026-04-01T10:00:00Z", "2026-04-01T10:00:00", "2026-04-01T10:00:00+02:00", "2026-04-01 10:00",
        "2026-04-01t10:00:00z", "2026-04-01T10:00:00.123Z", "2026-04-01T10:00:00,5Z", "2026-04-01T10:00:00+0200", "2026-04-01T10:00:00+02",
        "2026-04-01T10:00:60Z", "2026-04-01T23:59:59.9999999Z", "2026-04-01T10:00:00-00:00", "2026-04-01_10:00", "2026-04-01T10:00:00 Z",
        "2026-13-01", "2026-02-30", "2026-02-29", "2024-02-29", "2026-04-01T25:00:00Z", "yesterday!", "2026/04/01", "20260401", "1700000000",
        "1700000000123", "1700000000.5", "-1", "2026-04-01T10:00Z", "2026-04-01T10", "2026-4-01", "0000-01-01", "9999-12-31T23:59:59Z",
        "draft", "paid", "PAID", "created_at", "-status", "status ", "x"*41, "1,2", "é", "2026-04-01T10:00:00.000000001Z", "  1.5  ", "1_0.5", "1e", "e5", "+inf", "infinity", "NaN"]
cases = []
def record(kind, adapter, value, loc):
    try:
        out = adapter.validate_python(value, from_attributes=True)
        if isinstance(out, datetime.datetime): outv = out.isoformat()
        elif isinstance(out, list): outv = [str(x.value) if isinstance(x, enum.Enum) else str(x) for x in out]
        elif isinstance(out, uuid.UUID): outv = str(out)
        else: outv = out if not isinstance(out, float) else repr(out)
        cases.append({"kind": kind, "input": value, "ok": True, "out": outv})
    except ValidationError as e:
        errs = []
        for er in e.errors(include_url=False):
            d = {"type": er["type"], "loc": list(loc) + list(er["loc"]), "msg": er["msg"], "input": er["input"]}
            if "ctx" in er: d["ctx"] = er["ctx"]
            errs.append(d)
        cases.append({"kind": kind, "input": value, "ok": False, "want": json.dumps(errs, ensure_ascii=False, separators=(",", ":"), default=lambda o: {})})
for s in pool:
    for k, a in scalars.items():
        record(k, a, s, ("query", k))
for i in range(600):
    vals = [random.choice(pool) for _ in range(random.randint(1,3))]
    record("filter_uuid", filter_uuid, vals, ("query", "filter_uuid"))
    record("filter_enum", filter_enum, vals, ("query", "filter_enum"))
    record("filter_str", filter_str, vals, ("query", "filter_str"))
    record("sorting", sorting, vals, ("query", "sorting"))
query_cases = cases

# ---- URLs (HttpUrl, and Polar's HttpsUrl) ----
from pydantic import HttpUrl, AnyUrl, UrlConstraints
url_adapters = {
    "HttpUrl": TypeAdapter(HttpUrl),
    "HttpsUrl": TypeAdapter(Annotated[AnyUrl, UrlConstraints(max_length=2083, allowed_schemes=["https"], host_required=True)]),
}
url_inputs = ["", "  ", "\t", "x" * 2100, "ftp://", "mailto:x", "foo://", "localhost:8080", "https://x%.com", "https://x<y.com",
    "https://x^y.com", "https://x|y.com", "https://x y.com", "https://x\x01y.com", "https://xn--a.com", "https://a.b.c.d.1/",
    "https://0x7f.1/", "https://1.2.3/", "https://999999999999/", "https://x.com/" + " " * 2000, "https://x.com/" + "é" * 1100,
    "ftp://" + "a" * 2100, "https://x.com/./a/../b/%2e%2E/c", "https:\\\\x.com\\a\\b", "https://x.com/a?b='c'&d=\"e\"#f`g",
    "https://u s:p@x.com/", "https://:p@x.com/", "https://u:@x.com/", "https://x.com:/", "https://x.com:0443/", "https://X.COM./",
    "https://[::FFFF:1.2.3.4]/", "https://[1:2:3]/", "https://x.com/{a}|b^c", "https://x.com?a b", "https://ÉXAMPLE.com",
    "https://straße.de/", "https://1.2.3.4.5/", "https://0/", "https://0x/", "https://1.2.3.08/", "https://x.1a/",
    "https://x.com:65535", "https://x.com:65536", "https://x.com:8a", "https://x.com#", "https://x.com?", "https://x.com/%zz",
    "https://x.com/é?é#é", "https://Example.com", "https://example.com/a b?q=1 2#f g", "http://example.com:80/x",
    "https://example.com:443", "example.com", " https://x.com ", "ftp://x.com", "https://", "https://:80", "https://exa mple.com",
    "https://[::1]:8080/", "https://1.2.3.999/", "https://ünicode.com/", "https://x.com:99999", "https://user:pw@x.com/",
    "HTTPS://X.COM/Path", 5, None, "https:x.com", "https:/x.com", "http://localhost", "https://x..com", "https://-x.com",
    "https://x_y.com", "https://%41.com", "https://a@b@x.com/", "https://x.com/a/..", "https://x.com/a/.", "https://x.com/..",
    "https://[0:0:0:0:0:0:0:1]/", "https://[1:0:0:2:0:0:0:3]/", "https://[::]/", "https://münchen.de/ü",
    "https://xn--mnchen-3ya.de/", "https://日本.jp", "https://x.com/a%2Fb", "wss://x.com:443", "ws://x.com:80/",
    "https://0x100.1/", "https://256.1/", "https://1.16777216/", "https://1.16777215/", "https://4294967295/",
    "https://4294967296/", "https://x.com\\\\a", "https://x.com?#", "https://x.com/a\tb\nc", "http://[::1]",
    "https://[::1%eth0]/", "https://[1.2.3.4]/"]
url_cases = []
for value in url_inputs:
    for name, adapter in url_adapters.items():
        try:
            url_cases.append({"schema": name, "input": value, "value": str(adapter.validate_python(value)), "detail": None})
        except ValidationError as e:
            items = []
            for er in e.errors(include_url=False):
                d = {"type": er["type"], "loc": ["body", "u"] + list(er["loc"]), "msg": er["msg"], "input": er["input"]}
                if "ctx" in er: d["ctx"] = er["ctx"]
                items.append(d)
            url_cases.append({"schema": name, "input": value, "value": None, "detail": items})

# Select a deterministic subset and write it next to this script.
import os, pydantic, pydantic_core
random.seed(1)
body = [c for c in body_cases if c["raw"] != "null"]  # FastAPI answers a null body itself
seen = set(); uniq = []
for c in body:
    if c["raw"] not in seen:
        seen.add(c["raw"]); uniq.append(c)
ok = [c for c in uniq if c["ok"]]; bad = [c for c in uniq if not c["ok"]]
sel = random.sample(ok, 60) + random.sample(bad, 340)
sel_body = [{"schema": c["schema"], "raw": c["raw"], "detail": json.loads(c["want"]) if not c["ok"] else None} for c in sel]
qsel = [c for c in query_cases if c["kind"] in ("page", "bool", "datetime", "float", "uuid")]
qsel += random.sample([c for c in query_cases if c["kind"].startswith("filter") or c["kind"] == "sorting"], 200)
sel_query = [{"param": c["kind"], "values": c["input"] if isinstance(c["input"], list) else [c["input"]],
              "detail": json.loads(c["want"]) if not c["ok"] else None} for c in qsel]
about = ("Oracle cases: the 422 items pydantic %s (pydantic-core %s) produces for these inputs, validated as FastAPI "
         "does (Python lax mode, from_attributes, loc prefixed by body/query). Generated by pydantic_golden.py; "
         "regenerate rather than edit.") % (pydantic.VERSION, pydantic_core.__version__)
def dumps(o): return json.dumps(o, ensure_ascii=False, separators=(",", ":"))
lines = ['{"_about":' + dumps(about) + ',', '"body":[']
lines += [dumps(c) + ("," if i < len(sel_body) - 1 else "") for i, c in enumerate(sel_body)]
lines += ['],', '"query":[']
lines += [dumps(c) + ("," if i < len(sel_query) - 1 else "") for i, c in enumerate(sel_query)]
lines += ['],', '"url":[']
lines += [dumps(c) + ("," if i < len(url_cases) - 1 else "") for i, c in enumerate(url_cases)]
lines += [']}']
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pydantic-golden.json")
open(out, "w").write("\n".join(lines) + "\n")
print(len(sel_body), len(sel_query))
