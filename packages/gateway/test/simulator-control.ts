/** The simulator's control API over HTTP, for tests that run the simulator as its own process. */
export function simulatorControl(url: string): (method: string, path: string, body?: unknown) => Promise<any> {
  return async (method, path, body) => {
    const response = await fetch(`${url}/_control${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`simulator control ${method} ${path}: ${response.status} ${text}`);
    return text === '' ? undefined : JSON.parse(text);
  };
}
