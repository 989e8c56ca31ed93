/* global document, fetch, Redoc */
// Renders the OpenAPI document named by #reference's data-spec-url with Redoc. The operator page
// has #token-form: the document is fetched with the token typed there, which lives only in this
// handler's variables (never in storage, the URL or a cookie), and rendered from memory.
'use strict';

const container = document.getElementById('reference');
const form = document.getElementById('token-form');

const options = {
  expandResponses: '200,201,202',
  requiredPropsFirst: true,
  pathInMiddlePanel: true,
  showWebhookVerb: true,
  jsonSampleExpandLevel: 4,
  sanitize: true,
  hideDownloadButton: form !== null,
  theme: { typography: { fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif', headings: { fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif' } } },
};

async function showOperatorReference(event) {
  event.preventDefault();
  const input = document.getElementById('operator-token');
  const status = document.getElementById('token-status');
  const token = input.value.trim();
  input.value = '';
  if (token === '') return;
  status.textContent = 'Loading the operator reference…';
  try {
    const response = await fetch(container.dataset.specUrl, { headers: { Authorization: `Bearer ${token}` }, cache: 'no-store', credentials: 'omit' });
    const body = await response.json();
    if (!response.ok) {
      status.textContent = `${response.status}: ${body && body.error ? body.error.message : 'the document could not be read'}`;
      return;
    }
    form.hidden = true;
    status.textContent = '';
    Redoc.init(body, options, container);
  } catch {
    status.textContent = 'The gateway could not be reached.';
  }
}

if (form) form.addEventListener('submit', showOperatorReference);
else Redoc.init(container.dataset.specUrl, options, container);
