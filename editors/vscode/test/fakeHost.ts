// A Host that records what the commands asked of the editor.
import { ActiveDocument, Host, Level } from "../src/commands";

export interface FakeHost extends Host {
  requests: { method: string; params: unknown }[];
  notifications: { level: Level; message: string; actions: string[] }[];
  statuses: string[];
  logs: string[];
  outputShown: number;
  restarts: number;
}

export function fakeHost(options: {
  document?: ActiveDocument;
  running?: boolean;
  answer?: (method: string, params: unknown) => Promise<unknown>;
  pick?: string;
} = {}): FakeHost {
  const host: FakeHost = {
    requests: [],
    notifications: [],
    statuses: [],
    logs: [],
    outputShown: 0,
    restarts: 0,
    activeDocument: () => options.document,
    isRunning: () => options.running ?? true,
    sendRequest(method, params) {
      host.requests.push({ method, params });
      return options.answer ? options.answer(method, params) : Promise.resolve(null);
    },
    async notify(level, message, ...actions) {
      host.notifications.push({ level, message, actions });
      return options.pick;
    },
    setStatus: (message) => void host.statuses.push(message),
    log: (message) => void host.logs.push(message),
    showOutput: () => void host.outputShown++,
    async restart() {
      host.restarts++;
    },
  };
  return host;
}
