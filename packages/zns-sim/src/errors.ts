/**
 * ZNS error catalogue as the simulator answers it (business host: HTTP 200, `{error, message, data: null}`).
 *
 * `message` is the English API string where the reference quotes one that the platform actually sent
 * (0 … -119, -124). For the other codes the reference has only the Vietnamese description, so that is
 * what the simulator sends as `message` (our choice; see README "Documented choices").
 */
export const ZNS_MESSAGES: Readonly<Record<number, string>> = Object.freeze({
  0: 'Success',
  [-100]: 'Unknown error',
  [-101]: 'Application invalid',
  [-102]: 'Application not existed',
  [-103]: 'Application not activated',
  [-104]: 'App secret key invalid',
  [-105]: 'Application not link to any OA',
  [-106]: 'Method unsupported',
  [-107]: 'Message ID invalid',
  [-108]: 'Phone number invalid',
  [-109]: 'Template ID invalid',
  [-1091]: 'Template không có trạng thái Reject hoặc Template được tạo từ Admin tool',
  [-110]: 'Zalo version unsupported',
  [-111]: 'Template data empty',
  [-112]: 'Template data invalid',
  [-1121]: 'Dữ liệu tham số vượt quá giới hạn ký tự',
  [-1122]: 'Dữ liệu mẫu ZNS thiếu tham số',
  [-1123]: 'Không thể tạo QR code, vui lòng kiểm tra lại',
  [-1124]: 'Dữ liệu tham số không đúng format',
  [-113]: 'Button invalid',
  [-1131]: 'Đường dẫn liên kết không đúng định dạng',
  [-114]: 'User is inactive, or reject the message, or using an outdated Zalo version, or other internal errors',
  [-115]: 'Out of quota',
  [-116]: 'Text invalid',
  [-117]: 'OA or App does not have permission to access this template',
  [-118]: 'Zalo account not existed',
  [-119]: 'Tài khoản không thể nhận ZNS',
  [-120]: 'OA chưa được cấp quyền sử dụng tính năng này',
  [-1201]: 'OA chưa có quyền tạo template tag 3',
  [-1202]: 'OA không có quyền sử dụng media resources (image/logo)',
  [-121]: 'Mẫu ZNS không có nội dung',
  [-122]: 'Body request không đúng định dạng JSON',
  [-123]: 'Giải mã nội dung thông báo RSA thất bại',
  [-124]: 'Access token invalid',
  [-1241]: 'appsecret_proof không hợp lệ',
  [-125]: 'ID Official Account không hợp lệ',
  [-126]: 'Ví (development mode) không đủ số dư',
  [-127]: 'Template test chỉ có thể được gửi cho quản trị viên',
  [-128]: 'Mã encoding key không tồn tại',
  [-129]: 'Không thể tạo RSA key, vui lòng thử lại sau',
  [-130]: 'Nội dung mẫu ZNS vượt quá giới hạn kí tự',
  [-131]: 'Mẫu ZNS chưa được phê duyệt',
  [-132]: 'Tham số không hợp lệ',
  [-133]: 'Mẫu ZNS này không được phép gửi vào ban đêm (từ 22h-6h)',
  [-134]: 'Người dùng chưa phản hồi gợi ý nhận ZNS từ OA',
  [-135]: 'OA chưa có quyền gửi ZNS (chưa được xác thực, đang sử dụng gói miễn phí)',
  [-1351]: 'OA không có quyền gửi ZNS (Hệ thống chặn do phát hiện vi phạm)',
  [-136]: 'Cần kết nối với ZCA để sử dụng tính năng này',
  [-137]: 'Thanh toán ZCA thất bại (ví không đủ số dư, …)',
  [-138]: 'Ứng dụng gửi ZNS chưa có quyền sử dụng tính năng này',
  [-1381]: 'OA chưa cấp quyền cho Extension về quyền sử dụng ZCA của OA',
  [-139]: 'Người dùng từ chối nhận loại ZNS này',
  [-140]: 'OA chưa được cấp quyền gửi ZNS hậu mãi cho người dùng này',
  [-141]: 'Người dùng từ chối nhận ZNS từ Official Account',
  [-142]: 'RSA key không tồn tại, vui lòng gọi API tạo RSA key',
  [-143]: 'RSA key đã tồn tại, vui lòng gọi API lấy RSA key',
  [-144]: 'OA đã vượt giới hạn gửi ZNS trong ngày',
  [-1441]: 'OA request gửi vượt ngưỡng monthly promotion quota',
  [-145]: 'OA không được phép gửi loại nội dung ZNS này',
  [-146]: 'Mẫu ZNS này đã bị vô hiệu hoá do chất lượng gửi thấp',
  [-147]: 'Mẫu ZNS đã vượt giới hạn gửi trong ngày',
  [-1471]: 'OA đã vượt giới hạn gửi tin ZNS hậu mãi cho người dùng này trong tháng.',
  [-1472]: 'OA đã vượt giới hạn gửi ZNS hậu mãi cho người dùng này trong ngày',
  [-148]: 'Không tìm thấy ZNS journey token',
  [-149]: 'ZNS journey token không hợp lệ',
  [-1491]: 'ZNS journey token type không tương thích với template',
  [-150]: 'ZNS journey token đã hết hạn',
  [-151]: 'Không phải mẫu ZNS E2EE',
  [-152]: 'Lấy E2EE key thất bại',
  [-153]: 'Dữ liệu truyền vào sai quy định',
  [-158]: 'Dung lượng file vượt qua dung lượng cho phép',
  [-159]: 'Định dạng file upload không được cho phép',
  [-160]: 'Số lượng tạo/edit template hoặc upload attachment vượt quá daily quota',
  [-161]: 'sending_mode truyền sai giá trị cho phép',
  [-162]: 'Chế độ Gửi vượt hạn mức (sending_mode = 3) không hỗ trợ để gửi tin tag 1, 2',
});

export interface ZnsErrorBody {
  error: number;
  message: string;
  data: null;
}

const errorBodies = new Map<number, ZnsErrorBody>();

/** The business-host error body for a code. Bodies are cached and frozen: they are sent as is. */
export function znsError(code: number): ZnsErrorBody {
  let body = errorBodies.get(code);
  if (!body) {
    body = Object.freeze({ error: code, message: ZNS_MESSAGES[code] ?? 'Unknown error', data: null }) as ZnsErrorBody;
    errorBodies.set(code, body);
  }
  return body;
}

export function isKnownZnsCode(code: number): boolean {
  return Object.prototype.hasOwnProperty.call(ZNS_MESSAGES, code);
}

/**
 * OAuth host (`/v4/oa/access_token`) errors. The reference only confirms -14002 (invalid app id) and -14003
 * (invalid redirect uri); the other codes are OUR CHOICE, documented in the README.
 */
export const OAUTH_ERRORS = Object.freeze({
  invalidRequest: { error: -14001, error_name: 'Invalid parameter', error_reason: 'Invalid request', error_description: 'grant_type or a required parameter is missing or unsupported' },
  invalidAppId: { error: -14002, error_name: 'Invalid parameter', error_reason: 'Invalid app_id', error_description: 'app_id is invalid or the app is inactive' },
  invalidSecretKey: { error: -14004, error_name: 'Invalid parameter', error_reason: 'Invalid secret_key', error_description: 'secret_key header is missing or does not match the app secret' },
  invalidRefreshToken: { error: -14014, error_name: 'Invalid parameter', error_reason: 'Invalid refresh_token', error_description: 'refresh_token is invalid, expired or already used' },
  invalidCode: { error: -14015, error_name: 'Invalid parameter', error_reason: 'Invalid authorization code', error_description: 'code is invalid, expired or already used' },
  invalidCodeVerifier: { error: -14019, error_name: 'Invalid parameter', error_reason: 'Invalid code_verifier', error_description: 'code_verifier does not match the code_challenge' },
} as const);

export type OAuthErrorBody = (typeof OAUTH_ERRORS)[keyof typeof OAUTH_ERRORS];
