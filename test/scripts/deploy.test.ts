// deploy/: the Dockerfile and the Kubernetes manifests, checked as far as this machine can (no
// cluster and no Docker daemon here; docs/deploy.md says what that leaves unchecked):
//  - every manifest passes the Kubernetes API's schemas (kubernetes-models, generated from the
//    API's OpenAPI definitions) and has no field the API's types lack (TypeScript's check), and the
//    Dockerfile passes dockerfile-utils (VS Code's Docker validator);
//  - what they say of the program is true of the program: each flag in the containers' args is one
//    the built CLI lists in its --help, each ULTRAPLAN_ variable one it reads, each probe path one
//    it answers, each probe port one it listens on;
//  - the image's agents are the pins (installed from src/agents/catalogue/agents.json by the
//    tests' own script, no version written in the Dockerfile);
//  - then for real: the server bundle built by the Dockerfile's own build command, laid out as the
//    image lays it out (no node_modules), started with the manifests' args and env against the
//    test PostgreSQL; its probes answer ok, and the worker finds the pinned agent on the image's PATH.
import * as assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import { parseAllDocuments } from 'yaml';
import { validate as validateDockerfile } from 'dockerfile-utils';
import { Copy, DockerfileParser, type Instruction } from 'dockerfile-ast';
import * as agentPaths from '../../scripts/agents-config.cjs';
import { LIVENESS_PATH, READINESS_PATH } from '../../src/service/http/health';
import { freePort, sharedPostgresCluster } from '../support/postgresCluster';
import { ensurePinnedAgent } from '../support/realAgents';
import { REPO_ROOT, runServerCli, tempDir } from '../support/serverProcess';
import { waitFor } from '../support/wait';

const DEPLOY = path.join(REPO_ROOT, 'deploy');
const K8S = path.join(DEPLOY, 'k8s');

// The shapes this test reads; the schemas below check the rest.
interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    configMapKeyRef?: { name: string; key: string; optional?: boolean };
    fieldRef?: { fieldPath: string };
  };
}
interface Probe {
  httpGet?: { path: string; port: string | number };
}
interface Container {
  name: string;
  image: string;
  args?: string[];
  env?: EnvVar[];
  ports?: Array<{ name?: string; containerPort: number }>;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: {
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    privileged?: boolean;
    capabilities?: { drop?: string[]; add?: string[] };
    seccompProfile?: { type: string; localhostProfile?: string };
  };
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
}
interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: {
    replicas?: number;
    selector?: { matchLabels?: Record<string, string> } & Record<string, unknown>;
    minAvailable?: number;
    maxUnavailable?: number;
    ports?: Array<{ targetPort: string | number }>;
    podSelector?: { matchLabels?: Record<string, string> };
    policyTypes?: string[];
    ingress?: NetworkRule[];
    egress?: NetworkRule[];
    template?: {
      metadata: { labels: Record<string, string> };
      spec: {
        securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; seccompProfile?: { type: string } };
        hostUsers?: boolean;
        containers: Container[];
        volumes?: Array<{
          name: string;
          emptyDir?: unknown;
          secret?: { secretName: string; defaultMode?: number; items?: Array<{ key: string; path: string }> };
        }>;
      };
    };
  };
  stringData?: Record<string, string>;
  data?: Record<string, string>;
  file: string;
}
interface NetworkRule {
  from?: NetworkPeer[];
  to?: NetworkPeer[];
  ports?: Array<{ protocol?: string; port?: string | number }>;
}
interface NetworkPeer {
  namespaceSelector?: { matchLabels?: Record<string, string> };
  podSelector?: { matchLabels?: Record<string, string> };
  ipBlock?: { cidr: string; except?: string[] };
}

function readManifests(file: string): Manifest[] {
  const text = readFileSync(path.join(K8S, file), 'utf8');
  return parseAllDocuments(text).map((doc) => {
    assert.equal(doc.errors.length, 0, `${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
    return { ...(doc.toJS() as Omit<Manifest, 'file'>), file };
  });
}

const kustomization = (() => {
  const parsed = parseAllDocuments(readFileSync(path.join(K8S, 'kustomization.yaml'), 'utf8'));
  return parsed[0]?.toJS() as { resources: string[]; images: Array<{ name: string; newName: string; newTag: string }> };
})();
const applied = kustomization.resources.flatMap(readManifests);
const secretsExample = readManifests('secrets.example.yaml');
const configExample = readManifests('config.example.yaml');
const deployment = (name: string): Manifest => {
  const found = applied.find((m) => m.kind === 'Deployment' && m.metadata.name === name);
  assert.ok(found, `a Deployment ${name}`);
  return found;
};
const container = (name: string): Container => deployment(name).spec?.template?.spec.containers[0] as Container;
const api = () => container('ultraplan-api');
const worker = () => container('ultraplan-worker');

/** The value after `--flag` in a container's args. */
function flagValue(args: string[], flag: string): string {
  const at = args.indexOf(flag);
  assert.ok(at >= 0 && args[at + 1] !== undefined, `args hold ${flag} VALUE: ${args.join(' ')}`);
  return args[at + 1] as string;
}

/** The agents' model key variables (the catalogue's keyEnv), the one Secret a worker may take as a variable. */
const MODEL_KEY_VARIABLES = new Set(
  Object.values(
    JSON.parse(readFileSync(path.join(REPO_ROOT, 'src', 'agents', 'catalogue', 'agents.json'), 'utf8')) as Record<
      string,
      { keyEnv?: string[] }
    >,
  ).flatMap((entry) => entry.keyEnv ?? []),
);

/** The variables of a container whose value is a Secret. */
function secretVariables(c: Container): string[] {
  return (c.env ?? []).filter((e) => e.valueFrom?.secretKeyRef).map((e) => e.name);
}

/** The --flags a help text lists. */
function helpFlags(help: string): Set<string> {
  return new Set(help.match(/--[a-z][a-z0-9-]*/g) ?? []);
}

describe('deploy/: the Kubernetes manifests', function () {
  this.timeout(60_000);

  it('every manifest passes the Kubernetes schemas of its kind (kubernetes-models)', async () => {
    const models: Record<string, new (data: object) => { validate(): void }> = {
      'apps/v1/Deployment': (await import('kubernetes-models/apps/v1')).Deployment,
      'v1/Service': (await import('kubernetes-models/v1')).Service,
      'v1/Secret': (await import('kubernetes-models/v1')).Secret,
      'v1/Namespace': (await import('kubernetes-models/v1')).Namespace,
      'v1/ServiceAccount': (await import('kubernetes-models/v1')).ServiceAccount,
      'policy/v1/PodDisruptionBudget': (await import('kubernetes-models/policy/v1')).PodDisruptionBudget,
      'networking.k8s.io/v1/NetworkPolicy': (await import('kubernetes-models/networking.k8s.io/v1')).NetworkPolicy,
      'v1/ConfigMap': (await import('kubernetes-models/v1')).ConfigMap,
    };
    const all = [...applied, ...secretsExample, ...configExample];
    for (const manifest of all) {
      const Model = models[`${manifest.apiVersion}/${manifest.kind}`];
      assert.ok(Model, `${manifest.file}: no schema for ${manifest.apiVersion} ${manifest.kind}`);
      const { file: _file, ...object } = manifest;
      assert.doesNotThrow(() => new Model(object).validate(), `${manifest.file}: ${manifest.kind} ${manifest.metadata.name}`);
    }
    // The validator refuses what it should: a probe without a port.
    const broken = structuredClone(deployment('ultraplan-api'));
    delete (broken.spec?.template?.spec.containers[0]?.readinessProbe?.httpGet as { port?: unknown }).port;
    const { file: _file, ...object } = broken;
    assert.throws(() => new (models['apps/v1/Deployment'] as new (data: object) => { validate(): void })(object).validate(), /port/);
    // Every manifest in the folder is applied, or is the Secrets' example.
    const files = readdirSync(K8S).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
    assert.deepEqual(files.sort(), [...kustomization.resources, 'secrets.example.yaml', 'config.example.yaml'].sort());
  });

  it('has no field the Kubernetes API does not define (TypeScript checks each against the API types of kubernetes-models)', () => {
    // The schemas above accept unknown fields, as the API server's non-strict decoding would; a
    // misspelled field (readinesProbe) would then be dropped silently. An object literal typed
    // with the API's own types refuses any field they do not have, at any depth.
    const file = path.join(REPO_ROOT, 'test-output', `manifest-types-${process.pid}.ts`);
    mkdirSync(path.dirname(file), { recursive: true });
    const declarations = [...applied, ...secretsExample, ...configExample].map((manifest, index) => {
      const { file: _file, ...object } = manifest;
      const from = `kubernetes-models/${manifest.apiVersion}/${manifest.kind}`;
      return {
        name: `${manifest.file}: ${manifest.kind} ${manifest.metadata.name}`,
        text: `export const m${index}: import('${from}').I${manifest.kind} = ${JSON.stringify(object)};`,
      };
    });
    const typo = `export const typo: import('kubernetes-models/v1/Container').IContainer = { name: 'c', image: 'i', readinesProbe: {} };`;
    writeFileSync(file, [...declarations.map((d) => d.text), typo].join('\n'));
    try {
      const program = ts.createProgram([file], {
        strict: true,
        noEmit: true,
        module: ts.ModuleKind.Preserve,
        moduleResolution: ts.ModuleResolutionKind.Bundler,
        skipLibCheck: true,
        types: [],
      });
      const problems = ts.getPreEmitDiagnostics(program).map((d) => {
        const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line : -1;
        return `${declarations[line]?.name ?? `line ${line + 1}`}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
      });
      assert.equal(problems.length, 1, problems.join('\n'));
      assert.match(
        problems[0] as string,
        /'"?readinesProbe"?' does not exist in type 'IContainer'/,
        'the check refuses a misspelled field',
      );
    } finally {
      rmSync(file, { force: true });
    }
  });

  it('runs two API replicas behind a Service, workers apart, each with probes, resources, a PDB and no privileges', () => {
    assert.ok((deployment('ultraplan-api').spec?.replicas ?? 0) >= 2, 'at least two API replicas');
    assert.ok((deployment('ultraplan-worker').spec?.replicas ?? 0) >= 1);
    for (const name of ['ultraplan-api', 'ultraplan-worker']) {
      const pod = deployment(name).spec?.template;
      assert.ok(pod);
      assert.deepEqual(deployment(name).spec?.selector?.matchLabels, { 'app.kubernetes.io/name': name });
      assert.equal(pod.metadata.labels['app.kubernetes.io/name'], name);
      assert.equal(pod.spec.securityContext?.runAsNonRoot, true);
      const c = pod.spec.containers[0] as Container;
      assert.equal(c.image.split(':')[0], kustomization.images[0]?.name, 'the image kustomization.yaml sets');
      assert.equal(c.securityContext?.readOnlyRootFilesystem, true);
      assert.equal(c.securityContext?.allowPrivilegeEscalation, false);
      assert.deepEqual(c.securityContext?.capabilities?.drop, ['ALL']);
      for (const kind of ['requests', 'limits'] as const) {
        assert.ok(c.resources?.[kind]?.cpu && c.resources[kind].memory, `${name}: resources.${kind} cpu and memory`);
      }
      assert.equal(c.livenessProbe?.httpGet?.path, LIVENESS_PATH);
      assert.equal(c.readinessProbe?.httpGet?.path, READINESS_PATH);
      for (const probe of [c.livenessProbe, c.readinessProbe, c.startupProbe]) {
        if (probe)
          assert.ok(
            c.ports?.some((p) => p.name === probe.httpGet?.port),
            `${name}: the probe's port is a named container port`,
          );
      }
      for (const mount of c.volumeMounts ?? []) {
        assert.ok(
          pod.spec.volumes?.some((v) => v.name === mount.name && (v.emptyDir || (v.secret && mount.readOnly))),
          `${name}: ${mount.mountPath} is an emptyDir or a read-only Secret`,
        );
      }
      const budget = applied.find(
        (m) => m.kind === 'PodDisruptionBudget' && m.spec?.selector?.matchLabels?.['app.kubernetes.io/name'] === name,
      );
      assert.ok(budget, `${name}: a PodDisruptionBudget selects its pods`);
    }
    const service = applied.find((m) => m.kind === 'Service');
    assert.deepEqual(service?.spec?.selector, { 'app.kubernetes.io/name': 'ultraplan-api' });
    assert.ok(api().ports?.some((p) => p.name === service?.spec?.ports?.[0]?.targetPort));
    // The ports the probes reach are the ones the processes listen on.
    assert.equal(String(api().ports?.[0]?.containerPort), flagValue(api().args ?? [], '--port'));
    assert.equal(String(worker().ports?.[0]?.containerPort), flagValue(worker().args ?? [], '--health-port'));
    // A worker's workspaces live on its scratch volume.
    const scratchMount = worker().volumeMounts?.find((m) => flagValue(worker().args ?? [], '--scratch').startsWith(`${m.mountPath}/`));
    assert.ok(scratchMount, '--scratch is inside a mounted emptyDir');
  });

  it('mounts the database URL from its Secret as a 0400 file (--database-url-file), never a variable; OIDC settings from a ConfigMap', () => {
    for (const name of ['ultraplan-api', 'ultraplan-worker']) {
      const c = container(name);
      assert.ok(
        !(c.env ?? []).some((e) => e.name === 'ULTRAPLAN_DATABASE_URL'),
        `${name}: no ULTRAPLAN_DATABASE_URL (the server refuses it)`,
      );
      const file = flagValue(c.args ?? [], '--database-url-file');
      const mount = (c.volumeMounts ?? []).find((m) => file.startsWith(`${m.mountPath}/`));
      assert.ok(mount?.readOnly, `${name}: --database-url-file ${file} is in a read-only mount`);
      const volume = deployment(name).spec?.template?.spec.volumes?.find((v) => v.name === mount.name);
      assert.equal(volume?.secret?.secretName, 'ultraplan-database', `${name}: the mount is the database Secret`);
      assert.equal(volume?.secret?.defaultMode, 0o400, `${name}: only the server's user reads it`);
      const item = volume?.secret?.items?.find((i) => path.posix.join(mount.mountPath, i.path) === file);
      assert.ok(item, `${name}: ${file} is one key of the Secret`);
      const secret = secretsExample.find((x) => x.metadata.name === 'ultraplan-database');
      assert.ok(secret?.stringData && item.key in secret.stringData, `secrets.example.yaml shows ultraplan-database.${item.key}`);
    }
    // Several people's agents run on the workers: each in a sandbox, and the pod lets bubblewrap make one.
    assert.equal(flagValue(worker().args ?? [], '--sandbox'), 'required');
    assert.equal(deployment('ultraplan-worker').spec?.template?.spec.hostUsers, false);
    const names = (c: Container) => (c.env ?? []).map((e) => e.name);
    for (const name of [
      'ULTRAPLAN_OIDC_ISSUER',
      'ULTRAPLAN_OIDC_AUDIENCE',
      'ULTRAPLAN_OIDC_GROUPS_CLAIM',
      'ULTRAPLAN_OIDC_REVIEW_GROUPS',
      'ULTRAPLAN_OIDC_ADMIN_GROUP',
    ]) {
      assert.ok(names(api()).includes(name), `the API reads ${name}`);
    }
    for (const c of [api(), worker()]) {
      for (const env of c.env ?? []) {
        // A secret is never written into a manifest: every ULTRAPLAN_ and *_KEY value comes from elsewhere.
        if (/^ULTRAPLAN_(DATABASE|OIDC)|_KEY$|TOKEN/.test(env.name)) assert.ok(env.valueFrom, `${env.name} is not written here`);
        // A Secret in a variable stays in /proc/<pid>/environ for the process's life.
        assert.equal(env.valueFrom?.secretKeyRef, undefined, `${c.name}: ${env.name} must not be a Secret in a variable`);
        const configRef = env.valueFrom?.configMapKeyRef;
        if (configRef) {
          const config = configExample.find((x) => x.metadata.name === configRef.name);
          assert.ok(config?.data && configRef.key in config.data, `config.example.yaml shows ${configRef.name}.${configRef.key}`);
        }
      }
    }
  });

  it("hands the workers' model key over as a 0400 file (--agent-key-file NAME=FILE), never a variable", () => {
    const entry = flagValue(worker().args ?? [], '--agent-key-file');
    const [name, file] = [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)];
    assert.ok(MODEL_KEY_VARIABLES.has(name), `${name} is an agent's key variable`);
    assert.ok(!(worker().env ?? []).some((e) => MODEL_KEY_VARIABLES.has(e.name)), 'no model key variable in the worker');
    const mount = (worker().volumeMounts ?? []).find((m) => file.startsWith(`${m.mountPath}/`));
    assert.ok(mount?.readOnly, `${file} is in a read-only mount`);
    const volume = deployment('ultraplan-worker').spec?.template?.spec.volumes?.find((v) => v.name === mount.name);
    assert.equal(volume?.secret?.defaultMode, 0o400);
    const item = volume?.secret?.items?.find((i) => path.posix.join(mount.mountPath, i.path) === file);
    assert.ok(item, `${file} is one key of the Secret`);
    const secret = secretsExample.find((x) => x.metadata.name === volume?.secret?.secretName);
    assert.ok(secret?.stringData && item.key in secret.stringData, `secrets.example.yaml shows ${volume?.secret?.secretName}.${item.key}`);
  });

  it('refuses a Secret in a variable: the check finds one put in the API', () => {
    const broken = structuredClone(api());
    broken.env = [
      ...(broken.env ?? []),
      { name: 'ULTRAPLAN_OIDC_ISSUER', valueFrom: { secretKeyRef: { name: 'ultraplan-oidc', key: 'issuer' } } },
    ];
    assert.deepEqual(secretVariables(broken), ['ULTRAPLAN_OIDC_ISSUER']);
    assert.deepEqual(secretVariables(api()), []);
    assert.deepEqual(secretVariables(worker()), []);
  });

  it('gives each Deployment a NetworkPolicy: API in from the ingress controller only, workers no ingress, both out only to DNS, the database and public HTTPS', () => {
    const policies = applied.filter((m) => m.kind === 'NetworkPolicy');
    const deny = policies.find((p) => Object.keys(p.spec?.podSelector?.matchLabels ?? {}).length === 0);
    assert.ok(deny, 'a default-deny policy selects every pod');
    assert.deepEqual(deny.spec?.policyTypes?.slice().sort(), ['Egress', 'Ingress']);
    assert.equal(deny.spec?.ingress, undefined);
    assert.equal(deny.spec?.egress, undefined);
    for (const name of ['ultraplan-api', 'ultraplan-worker']) {
      const labels = deployment(name).spec?.template?.metadata.labels ?? {};
      const mine = policies.filter(
        (p) =>
          Object.keys(p.spec?.podSelector?.matchLabels ?? {}).length > 0 &&
          Object.entries(p.spec?.podSelector?.matchLabels ?? {}).every(([k, v]) => labels[k] === v),
      );
      assert.equal(mine.length, 1, `${name}: one NetworkPolicy selects its pods`);
      const policy = mine[0] as Manifest;
      assert.deepEqual(policy.spec?.policyTypes?.slice().sort(), ['Egress', 'Ingress'], `${name}: both directions are governed`);
      for (const rule of policy.spec?.egress ?? []) {
        assert.ok(rule.to && rule.to.length > 0, `${name}: every egress rule names where`);
        assert.ok(rule.ports && rule.ports.length > 0, `${name}: every egress rule names its ports`);
        for (const port of rule.ports) {
          assert.ok([53, 5432, 443].includes(Number(port.port)), `${name}: egress to port ${String(port.port)}`);
          if (Number(port.port) === 53) {
            for (const peer of rule.to)
              assert.equal(peer.podSelector?.matchLabels?.['k8s-app'], 'kube-dns', `${name}: DNS only to the resolver`);
          }
        }
        for (const peer of rule.to) {
          if (!peer.ipBlock) continue;
          // Never the cloud's metadata address; HTTPS never to a private range (the Kubernetes API, other pods).
          assert.ok(peer.ipBlock.except?.includes('169.254.0.0/16'), `${name}: the metadata range is excluded`);
          if (rule.ports.some((p) => Number(p.port) === 443)) {
            for (const range of ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16']) {
              assert.ok(peer.ipBlock.except?.includes(range), `${name}: HTTPS excludes ${range}`);
            }
          }
        }
      }
      const ports = (policy.spec?.egress ?? []).flatMap((r) => (r.ports ?? []).map((p) => Number(p.port)));
      assert.ok(ports.includes(53) && ports.includes(5432), `${name}: DNS and the database`);
      if (name === 'ultraplan-worker') {
        assert.deepEqual(policy.spec?.ingress, [], 'workers take no connection');
        assert.ok(ports.includes(443), 'workers reach the model APIs');
      } else {
        const ingress = policy.spec?.ingress ?? [];
        assert.equal(ingress.length, 1);
        const from = ingress[0]?.from ?? [];
        assert.ok(
          from.length > 0 && from.every((peer) => peer.namespaceSelector?.matchLabels && !peer.ipBlock),
          'the API: only from a named namespace',
        );
        assert.deepEqual(
          ingress[0]?.ports?.map((p) => p.port),
          ['http'],
        );
      }
    }
  });

  it("states the sandbox's needs in the pods' securityContext: no privilege, the workers' own user namespace and a seccomp profile that lets bubblewrap work", () => {
    const namespace = applied.find((m) => m.kind === 'Namespace') as Manifest & { metadata: { labels?: Record<string, string> } };
    assert.equal(namespace.metadata.labels?.['pod-security.kubernetes.io/enforce'], 'restricted');
    for (const name of ['ultraplan-api', 'ultraplan-worker']) {
      const pod = deployment(name).spec?.template?.spec;
      const c = container(name);
      assert.notEqual(c.securityContext?.privileged, true, `${name}: never privileged`);
      assert.equal(c.securityContext?.capabilities?.add, undefined, `${name}: no capability added`);
      const seccomp = c.securityContext?.seccompProfile ?? pod?.securityContext?.seccompProfile;
      // The restricted level refuses Unconfined: RuntimeDefault or a Localhost profile.
      assert.ok(seccomp && ['RuntimeDefault', 'Localhost'].includes(seccomp.type), `${name}: seccomp ${seccomp?.type}`);
    }
    const workerPod = deployment('ultraplan-worker').spec?.template?.spec;
    assert.equal(workerPod?.hostUsers, false, 'the workers run in a user namespace of their own');
    const profile = worker().securityContext?.seccompProfile;
    assert.equal(profile?.type, 'Localhost');
    const file = path.join(DEPLOY, 'seccomp', path.basename(profile?.localhostProfile ?? ''));
    assert.ok(existsSync(file), `the profile ${profile?.localhostProfile} is shipped in deploy/seccomp/`);
    const rules = JSON.parse(readFileSync(file, 'utf8')) as {
      defaultAction: string;
      syscalls: Array<{ names: string[]; action: string }>;
    };
    const refused = new Set(rules.syscalls.filter((r) => r.action === 'SCMP_ACT_ERRNO').flatMap((r) => r.names));
    for (const needed of ['unshare', 'clone', 'clone3', 'mount', 'umount2', 'pivot_root']) {
      assert.ok(!refused.has(needed), `bubblewrap needs ${needed}`);
    }
    for (const dangerous of ['ptrace', 'process_vm_readv', 'setns', 'bpf', 'keyctl', 'init_module', 'open_by_handle_at', 'userfaultfd']) {
      assert.ok(refused.has(dangerous), `the profile refuses ${dangerous}`);
    }
  });

  it('names only flags and variables the built CLI has', async () => {
    const serverHelp = await runServerCli(['--help']);
    const workerHelp = await runServerCli(['worker', '--help']);
    assert.equal(serverHelp.code, 0);
    assert.equal(workerHelp.code, 0);
    for (const [c, help] of [
      [api(), serverHelp.stdout],
      [worker(), workerHelp.stdout],
    ] as const) {
      const flags = helpFlags(help);
      for (const arg of (c.args ?? []).filter((a) => a.startsWith('--'))) {
        assert.ok(flags.has(arg), `${c.name}: ${arg} is in the CLI's --help`);
      }
      for (const env of (c.env ?? []).filter((e) => e.name.startsWith('ULTRAPLAN_'))) {
        assert.ok(help.includes(env.name), `${c.name}: ${env.name} is in the CLI's --help`);
      }
    }
    assert.equal(worker().args?.[0], 'worker');
  });
});

// ---------------------------------------------------------------------------------------------

const dockerfileText = readFileSync(path.join(DEPLOY, 'Dockerfile'), 'utf8');
const dockerfile = DockerfileParser.parse(dockerfileText);

/** Each stage's instructions, by stage name (the last, unnamed, as "final"). */
function stages(): Map<string, Instruction[]> {
  const result = new Map<string, Instruction[]>();
  for (const from of dockerfile.getFROMs()) {
    const start = from.getRange().start.line;
    const next = dockerfile.getFROMs().find((f) => f.getRange().start.line > start);
    const end = next ? next.getRange().start.line : Number.MAX_SAFE_INTEGER;
    result.set(
      from.getBuildStage() ?? 'final',
      dockerfile.getInstructions().filter((i) => i.getRange().start.line > start && i.getRange().start.line < end),
    );
  }
  return result;
}

const argsOf = (i: Instruction) => i.getArguments().map((a) => a.getValue());
const ofKeyword = (list: Instruction[], keyword: string) => list.filter((i) => i.getKeyword() === keyword);
/** A stage's COPY instructions, with where each copies from (another stage's name, or the repository: undefined). */
const copiesOf = (list: Instruction[]) =>
  list.filter((i): i is Copy => i instanceof Copy).map((copy) => ({ from: copy.getFromFlag()?.getValue(), args: argsOf(copy) }));

describe('deploy/: the Dockerfile', function () {
  this.timeout(60_000);

  it('pins its base image by digest, every stage', () => {
    const arg = dockerfile.getARGs().find((a) => a.getProperty()?.getName() === 'NODE_IMAGE');
    const image = arg?.getProperty()?.getValue() ?? '';
    assert.match(image, /^node:\d+-bookworm-slim@sha256:[0-9a-f]{64}$/, 'NODE_IMAGE is a tag and the digest of its index');
    for (const from of dockerfile.getFROMs()) {
      const name = from.getImageName() ?? '';
      assert.ok(from.getArgumentsContent()?.startsWith('${NODE_IMAGE}'), `FROM ${name} takes the pinned NODE_IMAGE`);
    }
  });

  it('passes the Dockerfile validator, and the validator refuses a broken one', () => {
    const problems = validateDockerfile(dockerfileText);
    assert.deepEqual(
      problems.map((p) => `${p.range.start.line + 1}: ${p.message}`),
      [],
    );
    assert.ok(validateDockerfile(`${dockerfileText}\nEXPOSE not-a-port\n`).length > 0);
  });

  it('builds the server bundle, installs the pinned agents from their pins file, and runs as a non-root user with no secret in it', () => {
    const byStage = stages();
    assert.deepEqual([...byStage.keys()], ['build', 'agents', 'final']);
    const runs = (stage: string) => ofKeyword(byStage.get(stage) ?? [], 'RUN').map((i) => argsOf(i).join(' '));
    assert.ok(runs('build').some((r) => r.includes('node esbuild.mjs --only=server,review-page')));
    // The agents: the pins file itself, through the tests' own install script.
    const agentCopies = copiesOf(byStage.get('agents') ?? []).flatMap((c) => c.args);
    assert.ok(agentCopies.includes('src/agents/catalogue/agents.json'));
    // …landing where scripts/agents-config.cjs requires it from (../src/agents/catalogue/agents.json).
    const pinsCopy = copiesOf(byStage.get('agents') ?? []).find((c) => c.args.includes('src/agents/catalogue/agents.json'));
    assert.equal(pinsCopy?.args.at(-1), './src/agents/catalogue/');
    assert.ok(runs('agents').some((r) => r.includes('node scripts/setup-agents.mjs') && r.includes('node deploy/link-agents.mjs')));
    for (const [id, spec] of Object.entries(agentPaths.PACKAGES)) {
      assert.ok(!dockerfileText.includes(spec.version), `${id}: its version is read from the pins file, not written here`);
    }
    // Whatever a COPY takes from the repository exists.
    for (const copy of copiesOf(dockerfile.getInstructions()).filter((c) => c.from === undefined)) {
      for (const source of copy.args.slice(0, -1)) assert.ok(existsSync(path.join(REPO_ROOT, source)), `COPY ${source}`);
    }
    const final = byStage.get('final') ?? [];
    const user = argsOf(ofKeyword(final, 'USER').at(-1) as Instruction)[0] ?? '';
    const [uid] = user.split(':');
    assert.ok(uid !== undefined && /^\d+$/.test(uid) && uid !== '0', `USER is a numeric non-root id, got ${user}`);
    for (const name of ['ultraplan-api', 'ultraplan-worker']) {
      assert.equal(String(deployment(name).spec?.template?.spec.securityContext?.runAsUser), uid, `${name} runs as the image's user`);
    }
    for (const instruction of [...ofKeyword(dockerfile.getInstructions(), 'ENV'), ...ofKeyword(dockerfile.getInstructions(), 'ARG')]) {
      assert.ok(!/TOKEN|SECRET|PASSWORD|API_KEY|DATABASE_URL/i.test(argsOf(instruction).join(' ')), 'no secret is baked in');
    }
    const exposed = ofKeyword(final, 'EXPOSE').flatMap(argsOf).sort();
    const containerPorts = [api(), worker()].flatMap((c) => (c.ports ?? []).map((p) => String(p.containerPort))).sort();
    assert.deepEqual(exposed, containerPorts);
  });
});

// ---------------------------------------------------------------------------------------------

/** A container's env as the kubelet would set it, from these Secrets and this pod name. */
/** A container's variables as the kubelet sets them, from these Secrets and ConfigMaps (by name). */
function podEnv(c: Container, secrets: Record<string, Record<string, string>>, podName: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of c.env ?? []) {
    const ref = e.valueFrom?.secretKeyRef ?? e.valueFrom?.configMapKeyRef;
    if (e.value !== undefined) env[e.name] = e.value;
    else if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.name') env[e.name] = podName;
    else if (ref) {
      const value = secrets[ref.name]?.[ref.key];
      if (value !== undefined) env[e.name] = value;
      else assert.ok(ref.optional, `the test gives ${ref.name}.${ref.key}`);
    }
  }
  return env;
}

/**
 * The pod's volumes as the kubelet would mount them, each a temp folder: a Secret's items written
 * as files with the Secret's mode, from these Secrets.
 */
function podMounts(name: string, secrets: Record<string, Record<string, string>>): Map<string, string> {
  const spec = deployment(name).spec?.template?.spec;
  const mounts = new Map<string, string>();
  for (const mount of container(name).volumeMounts ?? []) {
    const folder = tempDir();
    const secret = spec?.volumes?.find((v) => v.name === mount.name)?.secret;
    for (const item of secret?.items ?? []) {
      const value = secrets[secret?.secretName ?? '']?.[item.key];
      assert.ok(value !== undefined, `the test gives ${secret?.secretName}.${item.key}`);
      writeFileSync(path.join(folder, item.path), value, { mode: secret?.defaultMode ?? 0o644 });
    }
    mounts.set(mount.mountPath, folder);
  }
  return mounts;
}

/** The container's args with $(VAR) expanded, mounts moved to `mounts` and ports to free ones. */
function podArgs(c: Container, env: Record<string, string>, mounts: Map<string, string>, ports: Map<string, number>): string[] {
  return (c.args ?? []).map((arg, i, all) => {
    const previous = all[i - 1];
    if (previous !== undefined && ports.has(previous)) return String(ports.get(previous));
    const expanded = arg.replace(/\$\(([A-Z_]+)\)/g, (_, name: string) => env[name] ?? '');
    // A NAME=FILE value (--agent-key-file) keeps its NAME=.
    const named = /^[A-Z_]+=(?=\/)/.exec(expanded)?.[0] ?? '';
    let value = expanded.slice(named.length);
    // Once, by the mount that holds it (a value mapped into /tmp is not mapped again by a /tmp mount).
    const mount = [...mounts].find(([from]) => value === from || value.startsWith(`${from}/`));
    if (mount) value = mount[1] + value.slice(mount[0].length);
    return named + value;
  });
}

interface Started {
  child: ChildProcess;
  stderr(): string;
}

function startProcess(command: string[], cwd: string, env: NodeJS.ProcessEnv): Started {
  const child = spawn(command[0] as string, command.slice(1), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdout?.resume();
  return { child, stderr: () => stderr };
}

async function untilOk(url: string, started: Started): Promise<{ status: number; text: string }> {
  let last: { status: number; text: string } | undefined;
  try {
    return await waitFor(
      async () => {
        if (started.child.exitCode !== null)
          throw new Error(`exited ${started.child.exitCode} before answering ${url}:\n${started.stderr()}`);
        const response = await fetch(url, { signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
        if (!response) return undefined;
        last = { status: response.status, text: await response.text() };
        return last.status === 200 ? last : undefined;
      },
      { message: `${url} answering 200`, timeoutMs: 60_000, detail: () => started.stderr() },
    );
  } catch (err) {
    // Quoted as an answer, so the assertion shows what the probe said instead.
    if (last && started.child.exitCode === null) return last;
    throw err;
  }
}

describe('deploy/: the image layout with the manifests command lines, against PostgreSQL', function () {
  this.timeout(600_000);
  const processes: Started[] = [];
  after(async () => {
    await Promise.all(
      processes.map(
        ({ child }) =>
          new Promise((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve(undefined);
            child.once('exit', resolve);
            child.kill('SIGTERM');
          }),
      ),
    );
  });

  it('starts the API and a worker as the pods would, and their probes answer ok', async () => {
    const root = tempDir('ultraplan-image-');
    const byStage = stages();
    // The build stage: its COPYs into a folder of its own, then its build command there.
    const build = path.join(root, 'src');
    mkdirSync(build);
    for (const copy of copiesOf(byStage.get('build') ?? [])) {
      for (const source of copy.args.slice(0, -1)) cpSync(path.join(REPO_ROOT, source), path.join(build, source), { recursive: true });
    }
    symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(build, 'node_modules')); // `npm ci`, already done here
    const buildCommand = ofKeyword(byStage.get('build') ?? [], 'RUN')
      .map((i) => argsOf(i))
      .find((a) => a[1] === 'esbuild.mjs') as string[];
    const built = spawnSync(buildCommand[0] as string, buildCommand.slice(1), { cwd: build, encoding: 'utf8' });
    assert.equal(built.status, 0, built.stderr);
    // The final stage's copies from the build stage: the bundle alone, no node_modules anywhere above it.
    const app = path.join(root, 'app');
    for (const copy of copiesOf(byStage.get('final') ?? []).filter((c) => c.from === 'build')) {
      const [from, to] = copy.args as [string, string];
      cpSync(path.join(build, path.relative('/src', from)), path.join(root, to), { recursive: true });
    }
    // The agents stage: the pinned agents, linked by name into the folder the image puts first on PATH.
    for (const id of Object.keys(agentPaths.PACKAGES)) ensurePinnedAgent(id);
    const bin = path.join(root, 'bin');
    const linked = spawnSync(process.execPath, [path.join(DEPLOY, 'link-agents.mjs'), bin], { encoding: 'utf8' });
    assert.equal(linked.status, 0, linked.stderr);
    // The final stage installs bubblewrap (the workers' sandbox): here, the one the setup unpacked.
    assert.ok(dockerfileText.includes('bubblewrap'), 'the image installs bubblewrap');
    assert.ok(existsSync(agentPaths.privateBwrap()), `no bubblewrap at ${agentPaths.privateBwrap()}: run npm run setup`);
    symlinkSync(agentPaths.privateBwrap(), path.join(bin, 'bwrap'));

    const entrypoint = argsOf(ofKeyword(byStage.get('final') ?? [], 'ENTRYPOINT')[0] as Instruction)
      .join(' ')
      .replace(/[[\]",]/g, ' ')
      .trim()
      .split(/\s+/)
      .map((part) => (part.startsWith('/app/') ? path.join(root, part) : part));
    const database = await (await sharedPostgresCluster()).createDatabase();
    const secrets = {
      'ultraplan-database': { url: database },
      'ultraplan-agent': { 'anthropic-api-key': 'sk-ant-test-key' },
      // A ConfigMap: an issuer nobody answers for: the server starts and only warns that it cannot fetch its keys.
      'ultraplan-oidc': { issuer: 'https://issuer.invalid/', audience: 'ultraplan' },
    };
    const ports = new Map([
      ['--port', await freePort()],
      ['--health-port', await freePort()],
    ]);
    const baseEnv = { PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}`, LANG: 'C.UTF-8' };

    const apiEnv = podEnv(api(), secrets, 'ultraplan-api-test');
    const apiProcess = startProcess([...entrypoint, ...podArgs(api(), apiEnv, podMounts('ultraplan-api', secrets), ports)], app, {
      ...baseEnv,
      HOME: tempDir(),
      ...apiEnv,
    });
    processes.push(apiProcess);
    const apiUrl = `http://127.0.0.1:${ports.get('--port')}`;
    for (const probe of [api().livenessProbe, api().readinessProbe]) {
      assert.deepEqual(await untilOk(`${apiUrl}${probe?.httpGet?.path}`, apiProcess), { status: 200, text: '{"status":"ok"}' });
    }

    const workerEnv = podEnv(worker(), secrets, 'ultraplan-worker-test');
    const mounts = podMounts('ultraplan-worker', secrets);
    for (const folder of ['--workspace', '--scratch']) {
      mkdirSync(podArgs(worker(), workerEnv, mounts, ports)[(worker().args ?? []).indexOf(folder) + 1] as string, { recursive: true });
    }
    const workerProcess = startProcess([...entrypoint, ...podArgs(worker(), workerEnv, mounts, ports)], app, {
      ...baseEnv,
      HOME: mounts.get('/home/ultraplan') ?? tempDir(),
      ...workerEnv,
    });
    processes.push(workerProcess);
    const workerUrl = `http://127.0.0.1:${ports.get('--health-port')}`;
    for (const probe of [worker().livenessProbe, worker().readinessProbe]) {
      assert.deepEqual(await untilOk(`${workerUrl}${probe?.httpGet?.path}`, workerProcess), { status: 200, text: '{"status":"ok"}' });
    }
    // The worker found the pinned agent where the image puts it, not through npx.
    const agent = worker().args?.[(worker().args ?? []).indexOf('--agent') + 1]?.replace(/^acp:/, '') as keyof typeof agentPaths.PACKAGES;
    assert.match(workerProcess.stderr(), new RegExp(`acp: ${agentPaths.PACKAGES[agent]?.bin} `));
    assert.match(workerProcess.stderr(), /ultraplan-worker-test: probes on/);
    assert.ok(!workerProcess.stderr().includes(database) && !apiProcess.stderr().includes(database), 'the database URL is not logged');
    // Nor is it in what /proc shows of either process: their environment and command line.
    if (process.platform === 'linux') {
      for (const { child } of [apiProcess, workerProcess]) {
        for (const part of ['environ', 'cmdline']) {
          assert.ok(
            !readFileSync(`/proc/${child.pid}/${part}`, 'utf8').includes(database),
            `the database URL is in /proc/${child.pid}/${part}`,
          );
        }
      }
      assert.match(workerProcess.stderr(), /each agent runs in a sandbox of its own/);
    }
  });
});
