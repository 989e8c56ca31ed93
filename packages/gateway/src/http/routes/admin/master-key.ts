import { Type } from 'typebox';
import { reEncryptStoredSecrets } from '../../../services/admin/rotate-master-key.ts';
import { presentMasterKeyRotation } from '../../presenters/master-key-rotation.ts';
import { operatorContextOf, type App, type RouteDependencies } from '../../route-support.ts';
import { Nullable } from '../../schemas.ts';
import { JSON_BODY_ERRORS, OPERATOR_ERRORS } from '../../openapi/common-errors.ts';
import { KEY_ID_HEX } from '../../../lib/crypto.ts';

const SecretCountsSchema = Type.Object(
  {
    api_key_signing_secrets: Type.Integer(),
    app_secrets: Type.Integer(),
    refresh_tokens: Type.Integer(),
    access_tokens: Type.Integer(),
    oa_secret_keys: Type.Integer(),
  },
  { description: 'Per kind of stored secret' },
);

export const MasterKeyRotationSchema = Type.Object({
  master_key_id: Type.String({ description: "The id of the answering process's TMS_MASTER_KEY, which every stored secret is now under: a fingerprint, not the key" }),
  previous_master_key_id: Nullable(Type.String({ description: 'The id of its TMS_MASTER_KEY_PREVIOUS, if it has one' })),
  re_encrypted: SecretCountsSchema,
  remaining: SecretCountsSchema,
  unreadable: Type.Array(Type.Object({ kind: Type.String(), id: Type.String({ description: "The API key's id or the sender account's oa_id" }), problem: Type.String() }), {
    description: 'Secrets no key of the process opens (empty in a 200: the rotation is then complete)',
  }),
  complete: Type.Boolean({ description: 'True when every stored secret is under the current key' }),
});

const MASTER_KEY_ID = '3f9c2a7d41e0b865';
const PREVIOUS_MASTER_KEY_ID = '9a04e6b2c7d1f358';

const RotationBody = Type.Object(
  {
    master_key_id: Type.String({
      pattern: `^[0-9a-f]{${KEY_ID_HEX}}$`,
      description:
        'The id of the key to rotate to (the new TMS_MASTER_KEY), as `tms admin master-key-ids` or `tms admin rotate-master-key --generate-key` print it: the rotation runs only in a process whose current key it is',
    }),
  },
  { additionalProperties: false },
);
const NOTHING = { api_key_signing_secrets: 0, app_secrets: 0, refresh_tokens: 0, access_tokens: 0, oa_secret_keys: 0 };

/** POST /admin/v1/master-key/rotation: the re-encryption step of a master key rotation. */
export function registerAdminMasterKey(app: App, route: RouteDependencies): void {
  app.post(
    '/admin/v1/master-key/rotation',
    {
      schema: {
        tags: ['Operations'],
        operationId: 'rotateMasterKey',
        summary: 'Re-encrypt every stored secret under the current master key',
        description:
          "The re-encryption step of a master key rotation, as `tms admin rotate-master-key` without flags: run by the process that answers, it re-encrypts every stored secret (API keys' signing secrets, sender accounts' app secrets, refresh tokens, access tokens and OA secret keys) under that process's TMS_MASTER_KEY, reading old ones under its TMS_MASTER_KEY_PREVIOUS. Deploy both keys to every process first (see the README, Rotating the master key). The body names the key to rotate to by its id: a process whose current key is another (one not yet deployed with the new key, behind a load balancer mid-rollout) answers 409 `master_key_mismatch`, naming both ids, and re-encrypts nothing, where it would otherwise re-encrypt everything back under the old key. Batches are short and each rewrite applies only to the ciphertext it read, so the service keeps sending meanwhile, and the call is safe to repeat or to cut off: if the connection drops, the run goes on in the process, and calling again finishes it or finds nothing left. Secrets it cannot read, or that changed while it ran, make it 409 `master_key_rotation_incomplete`, naming them: keep the previous key then. Counts (never keys) go into the audit log. The embedded mode's steps that edit secrets.json on the machine (`--generate-key`, `--forget-previous`) are on the command line only.",
        body: RotationBody,
        'x-request-examples': { rotate: { summary: 'Rotate to the new key', value: { master_key_id: MASTER_KEY_ID } } },
        'x-responses': {
          200: {
            description: 'Every stored secret is under the current key.',
            examples: {
              rotated: {
                summary: 'A first run',
                value: {
                  master_key_id: MASTER_KEY_ID,
                  previous_master_key_id: PREVIOUS_MASTER_KEY_ID,
                  re_encrypted: { api_key_signing_secrets: 12, app_secrets: 3, refresh_tokens: 3, access_tokens: 3, oa_secret_keys: 2 },
                  remaining: NOTHING,
                  unreadable: [],
                  complete: true,
                },
              },
              again: { summary: 'Run again: nothing left to do', value: { master_key_id: MASTER_KEY_ID, previous_master_key_id: PREVIOUS_MASTER_KEY_ID, re_encrypted: NOTHING, remaining: NOTHING, unreadable: [], complete: true } },
            },
          },
        },
        response: { 200: MasterKeyRotationSchema },
        'x-error-types': [...JSON_BODY_ERRORS, 'master_key_mismatch', 'master_key_rotation_incomplete', ...OPERATOR_ERRORS],
        'x-error-messages': {
          master_key_mismatch: `the process that answered has master key ${PREVIOUS_MASTER_KEY_ID} as its current key, not ${MASTER_KEY_ID}, the key to rotate to: it has not been deployed (or restarted) with that key as TMS_MASTER_KEY yet. It holds ${MASTER_KEY_ID} only as its previous key (TMS_MASTER_KEY_PREVIOUS, step 2 of the rotation). Nothing was re-encrypted. Deploy the new key to every process, then call again (see the README, Rotating the master key).`,
          master_key_rotation_incomplete: `stored secrets are still not under master key ${MASTER_KEY_ID}: {"api_key_signing_secrets":0,"app_secrets":1,"refresh_tokens":0,"access_tokens":0,"oa_secret_keys":0}; keep the previous key.\nre-encrypted by this run: {"api_key_signing_secrets":12,"app_secrets":2,"refresh_tokens":3,"access_tokens":3,"oa_secret_keys":2}\nunreadable (give the process the key they name, or replace them: see the README, Rotating the master key):\napp_secrets 4318269720189301001: a stored secret is encrypted under master key 5be1d09c3a7f2e64, which this process does not hold (it holds ${MASTER_KEY_ID}, ${PREVIOUS_MASTER_KEY_ID}); start it with that key as TMS_MASTER_KEY (or TMS_MASTER_KEY_PREVIOUS during a rotation)`,
        },
      },
    },
    async (request) => presentMasterKeyRotation(await reEncryptStoredSecrets({ ctx: operatorContextOf(request, route), input: { masterKeyId: request.body.master_key_id } })),
  );
}
