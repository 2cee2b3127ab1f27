/** An admin as the API shows it (docs/dashboard.md, "Admins"). */
export interface AdminView {
  user_id: string;
  user_name: { first_name: string | null; username: string | null };
  permissions: string[];
}
